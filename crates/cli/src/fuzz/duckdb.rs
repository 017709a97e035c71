//! DuckDB as a third opinion: a Python process running scripts/duckdb_oracle.py over the
//! fuzzed tables written as Parquet (used where `python3 -c "import duckdb"` works).

use super::compare::Rows;
use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

const SCRIPT: &str = include_str!("../../../../scripts/duckdb_oracle.py");

pub struct DuckDb {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
}

impl DuckDb {
    /// Whether the duckdb Python package is importable.
    pub fn available() -> bool {
        Command::new("python3").args(["-c", "import duckdb"]).stderr(Stdio::null()).status().is_ok_and(|s| s.success())
    }

    /// Starts DuckDB over the `<table>.parquet` files in `dir`.
    pub fn start(dir: &Path) -> Result<DuckDb, String> {
        let script = dir.join("duckdb_oracle.py");
        std::fs::write(&script, SCRIPT).map_err(|e| e.to_string())?;
        let mut child = Command::new("python3")
            .arg(&script)
            .arg(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .map_err(|e| format!("python3: {e}"))?;
        let stdin = child.stdin.take().ok_or("no stdin")?;
        let mut stdout = BufReader::new(child.stdout.take().ok_or("no stdout")?);
        let mut ready = String::new();
        stdout.read_line(&mut ready).map_err(|e| e.to_string())?;
        if !ready.contains("ready") {
            return Err(format!("DuckDB did not start: {ready}"));
        }
        Ok(DuckDb { child, stdin, stdout })
    }

    /// DuckDB's rows, or its error message.
    pub fn query(&mut self, sql: &str) -> Result<Rows, String> {
        let request = serde_json::json!({ "sql": sql }).to_string();
        writeln!(self.stdin, "{request}").map_err(|e| format!("DuckDB: {e}"))?;
        let mut line = String::new();
        self.stdout.read_line(&mut line).map_err(|e| format!("DuckDB: {e}"))?;
        let v: serde_json::Value = serde_json::from_str(&line).map_err(|e| format!("DuckDB answer: {e}"))?;
        if let Some(e) = v.get("error") {
            return Err(e.as_str().unwrap_or_default().to_string());
        }
        let rows = v["rows"].as_array().ok_or("DuckDB answer without rows")?;
        Ok(rows
            .iter()
            .map(|r| {
                r.as_array()
                    .map(|c| c.iter().map(|x| x.as_str().unwrap_or_default().to_string()).collect())
                    .unwrap_or_default()
            })
            .collect())
    }
}

impl Drop for DuckDb {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
