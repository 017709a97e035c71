//! Prints the CUDA source a query compiles to: `cargo run -p gpusql --example cuda_src -- "<sql>"`.
fn main() -> Result<(), gpusql::Error> {
    let sql = std::env::args().nth(1).unwrap_or_else(|| "select count(*) from lineitem".into());
    let mut e = gpusql::Engine::new(gpusql::BackendChoice::Cpu)?;
    e.load_tpch(0.001)?;
    for (name, src) in e.cuda_sources(&sql)? {
        println!("// {name}\n{}", gpusql::strip_prelude(&src));
    }
    let n = e.compile_kernels(&sql, "sm_90")?;
    eprintln!("compiled {n} modules");
    Ok(())
}
