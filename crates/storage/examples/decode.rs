//! Decodes columns of a Parquet table and prints how long it took (a profiling aid):
//! `cargo run --release -p gpusql-storage --example decode -- DIR/lineitem l_quantity,l_shipdate`
#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let scan = gpusql_common::FileScan::new(gpusql_common::FileFormat::Parquet, vec![args[1].clone()]);
    let (_, t) = gpusql_storage::files::open(&scan, "t".into(), 1).expect("open");
    let cols: Vec<usize> = args[2].split(',').map(|c| t.schema.index_of(c).expect("column")).collect();
    let start = std::time::Instant::now();
    t.load(&cols, None).expect("decode");
    let ms = start.elapsed().as_secs_f64() * 1e3;
    println!(
        "decoded {} columns of {} rows in {ms:.0} ms ({:.0} M values/s)",
        cols.len(),
        t.rows,
        (cols.len() * t.rows) as f64 / ms / 1e3
    );
}
