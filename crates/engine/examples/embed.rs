//! Embedding gpusql: generate TPC-H, run a query, print the Arrow result.
//! `cargo run --release -p gpusql --example embed`

use gpusql::{BackendChoice, Engine};

fn main() -> Result<(), gpusql::Error> {
    let mut engine = Engine::new(BackendChoice::Auto)?;
    if let Some(n) = engine.notice() {
        eprintln!("{n}");
    }
    engine.load_tpch(0.01)?;
    let batches = engine.sql(
        "select l_returnflag, count(*) as n, sum(l_extendedprice) as revenue \
         from lineitem where l_shipdate <= date '1998-09-02' group by l_returnflag order by l_returnflag",
    )?;
    println!("{}", arrow::util::pretty::pretty_format_batches(&batches).map_err(gpusql::Error::from)?);
    Ok(())
}
