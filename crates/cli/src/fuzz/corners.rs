//! `gpusql fuzz --schema corners`: small tables whose values provoke the classes of
//! silent wrong answers SQL engines are prone to: signed zeros, NaN and infinities, ties at
//! every rounding position (in DOUBLE and DECIMAL), multi-byte UTF-8 text (for LIKE's `_`,
//! `length`, `substring`), NULL in every column, an empty table read from a CSV file of
//! its header alone, and joins on DOUBLE and text keys. The tables are written as Parquet
//! (and that CSV) and read back through the file readers, as a user's files would be.

use super::rng::Rng;
use gpusql::Engine;
use std::path::Path;

/// DOUBLE values: signed zeros, NaN, infinities, halves and binary near-ties, extremes
/// (the generator's DOUBLE literals too).
pub const DOUBLES: &[&str] = &[
    "-0.0::DOUBLE",
    "0.0::DOUBLE",
    "'nan'::DOUBLE",
    "'inf'::DOUBLE",
    "'-inf'::DOUBLE",
    "0.5::DOUBLE",
    "-0.5::DOUBLE",
    "1.5::DOUBLE",
    "2.5::DOUBLE",
    "-2.5::DOUBLE",
    "0.125::DOUBLE",
    "2.675::DOUBLE",
    "1.005::DOUBLE",
    "2.345::DOUBLE",
    "-44.9995::DOUBLE",
    "0.49999999999999994::DOUBLE",
    "1e300::DOUBLE",
    "-1e300::DOUBLE",
    "5e-324::DOUBLE",
    "12345.678::DOUBLE",
    "0.1::DOUBLE",
    "0.3::DOUBLE",
    "1.0::DOUBLE",
    "-1.0::DOUBLE",
    "3.0::DOUBLE",
    "1000000000000000.5::DOUBLE",
    "4503599627370497.0::DOUBLE",
    "-7.25::DOUBLE",
    "1234.5::DOUBLE",
];

/// DECIMAL(12,3) values: ties at each of the three places, signs, the widest.
const DECIMALS: &[&str] = &[
    "0.000",
    "0.005",
    "-0.005",
    "0.015",
    "0.025",
    "1.005",
    "2.675",
    "-2.675",
    "0.500",
    "-0.500",
    "1.250",
    "-1.250",
    "2.500",
    "123456789.999",
    "-123456789.999",
    "7.000",
    "0.050",
    "0.450",
];

/// BIGINT values.
const INTEGERS: &[&str] = &["0", "1", "-1", "2", "7", "-7", "10", "100", "2147483647", "-2147483648", "5", "-5", "3"];

/// Text: multi-byte characters of 2, 3 and 4 bytes, LIKE's wildcards as data, the empty
/// string, case pairs.
const TEXTS: &[&str] = &[
    "''",
    "'a'",
    "'Zoë'",
    "'Zoe'",
    "'é'",
    "'e'",
    "'naïve café'",
    "'日本語'",
    "'🦆'",
    "'x🦆y'",
    "'a%b_c'",
    "'ÄÖÜ'",
    "'Straße'",
    "'Ωmega'",
    "'Z'",
    "'zz'",
    "'A B'",
    "'ab'",
];

const DATES: &[&str] = &["DATE '1970-01-01'", "DATE '1999-12-31'", "DATE '2000-02-29'", "DATE '1969-12-31'"];

/// A value of `pool`, or NULL one time in `null_one_in`.
fn pick(rng: &mut Rng, pool: &[&str], null_one_in: usize) -> String {
    if rng.below(null_one_in) == 0 {
        "NULL".into()
    } else {
        rng.pick(pool).map(|s| s.to_string()).unwrap_or_else(|| "NULL".into())
    }
}

/// Creates the corner tables in `engine`, through files in `dir`:
/// - `cf` (240 rows): id, k (→ cd.k), x and y DOUBLE (x → cd.x), i BIGINT,
///   d DECIMAL(12,3), s VARCHAR (→ cd.s), dt DATE, b BOOLEAN;
/// - `cd` (one row per k 0..15): k, x DOUBLE, s VARCHAR, d DECIMAL(12,3);
/// - `ce`: a CSV file of its header alone (k, s: no rows).
pub fn load(engine: &mut Engine, dir: &Path) -> gpusql::Result<()> {
    std::fs::create_dir_all(dir).map_err(|e| gpusql::Error::Io(format!("{}: {e}", dir.display())))?;
    let mut rng = Rng::new(0x00c0_ffee);
    let mut rows = vec![];
    for id in 0..240 {
        rows.push(format!(
            "({id}, {}, {}, {}, {}, {}, {}, {}, {})",
            if rng.below(8) == 0 { "NULL".to_string() } else { rng.below(18).to_string() },
            pick(&mut rng, DOUBLES, 8),
            pick(&mut rng, DOUBLES, 8),
            pick(&mut rng, INTEGERS, 8),
            pick(&mut rng, DECIMALS, 8),
            pick(&mut rng, TEXTS, 8),
            pick(&mut rng, DATES, 8),
            pick(&mut rng, &["TRUE", "FALSE"], 8),
        ));
    }
    let dims: Vec<String> = (0..16)
        .map(|k| {
            format!(
                "({k}, {}, {}, {})",
                DOUBLES[k % DOUBLES.len()],
                TEXTS[(k * 5) % TEXTS.len()],
                if k == 15 { "NULL" } else { DECIMALS[k % DECIMALS.len()] }
            )
        })
        .collect();
    let statements = [
        "CREATE TABLE cf_rows (id INTEGER NOT NULL, k INTEGER, x DOUBLE, y DOUBLE, i BIGINT, d DECIMAL(12,3), s VARCHAR, dt DATE, b BOOLEAN)".to_string(),
        format!("INSERT INTO cf_rows VALUES {}", rows.join(", ")),
        "CREATE TABLE cd_rows (k INTEGER NOT NULL, x DOUBLE, s VARCHAR, d DECIMAL(12,3))".to_string(),
        format!("INSERT INTO cd_rows VALUES {}", dims.join(", ")),
    ];
    for s in &statements {
        engine.execute(s)?;
    }
    for t in ["cf", "cd"] {
        let path = dir.join(format!("{t}.parquet"));
        engine.execute(&format!("COPY {t}_rows TO '{}' (FORMAT parquet)", path.display()))?;
        engine.execute(&format!("DROP TABLE {t}_rows"))?;
        engine.register_parquet(t, &path.display().to_string())?;
    }
    let empty = dir.join("ce.csv");
    std::fs::write(&empty, "k,s\n").map_err(|e| gpusql::Error::Io(format!("{}: {e}", empty.display())))?;
    engine.register_csv("ce", &empty.display().to_string())
}
