//! Writes the eight TPC-H tables as CSV files.
//!
//! `cargo run --release -p gpusql-datagen --example dump_tpch -- <sf> <outdir>`

use std::path::PathBuf;
use std::time::Instant;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.len() != 2 {
        eprintln!("usage: dump_tpch <scale factor> <output directory>");
        std::process::exit(2);
    }
    let sf: f64 = match args[0].parse() {
        Ok(sf) => sf,
        Err(_) => {
            eprintln!("dump_tpch: scale factor '{}' is not a number", args[0]);
            std::process::exit(2);
        }
    };
    let dir = PathBuf::from(&args[1]);

    let t0 = Instant::now();
    let tables = match gpusql_datagen::tpch(sf) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("dump_tpch: {e}");
            std::process::exit(1);
        }
    };
    let generated = t0.elapsed();
    for t in &tables {
        eprintln!("{:>9} {:>12} rows", t.name, t.num_rows());
    }
    let t1 = Instant::now();
    if let Err(e) = gpusql_datagen::write_csv_dir(&tables, &dir) {
        eprintln!("dump_tpch: {e}");
        std::process::exit(1);
    }
    eprintln!(
        "SF {sf}: generated in {:.2}s, wrote CSV to {} in {:.2}s",
        generated.as_secs_f64(),
        dir.display(),
        t1.elapsed().as_secs_f64()
    );
}
