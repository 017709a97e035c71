//! double_text.cu (the GPU's DOUBLE-to-text) compiled for the host by the C compiler that
//! links Rust (`cc`; the file is plain C apart from `__device__`) and compared with the CPU
//! twin, `gpusql_common::double_text::double_text`, over every binary exponent (random
//! mantissas and the edge ones), decimal-looking values, integers and the specials. Needs
//! no GPU.

use gpusql_common::double_text::double_text;
use gpusql_common::xorshift::XorShift64Star;
use std::io::Write;
use std::process::Command;

const HARNESS: &str = r#"
#include <stdint.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#define __device__
#define __forceinline__ inline
"#;

const MAIN: &str = r#"
int main(int argc, char** argv) {
    FILE* in = fopen(argv[1], "r");
    unsigned long long bits;
    uint8_t buf[F64_TEXT_MAX + 1];
    while (fscanf(in, "%llx", &bits) == 1) {
        double x;
        memcpy(&x, &bits, 8);
        const uint32_t n = f64_text(x, buf);
        if (n > F64_TEXT_MAX) return 2;
        buf[n] = 0;
        printf("%s\n", (const char*)buf);
    }
    return 0;
}
"#;

fn inputs() -> Vec<f64> {
    let mut r = XorShift64Star(0x9e37_79b9_7f4a_7c15);
    let mut xs = vec![0.0, -0.0, f64::NAN, -f64::NAN, f64::INFINITY, f64::NEG_INFINITY, f64::MIN_POSITIVE, f64::MAX];
    let frac = (1u64 << 52) - 1;
    for exp in 0u64..2047 {
        for m in [0, 1, 2, frac, frac - 1, 1 << 51] {
            xs.push(f64::from_bits(exp << 52 | m));
        }
        for _ in 0..40 {
            let sign = (r.next_u64() & 1) << 63;
            xs.push(f64::from_bits(sign | exp << 52 | (r.next_u64() & frac)));
        }
    }
    for _ in 0..100_000 {
        let x = f64::from_bits(r.next_u64());
        if !x.is_nan() {
            xs.push(x);
        }
    }
    // Decimal-looking values (few digits, the kind typed and computed by users) and integers.
    for k in 0..20_000u64 {
        let digits = (r.next_u64() % 1_000_000) as f64;
        let scale = 10f64.powi((r.next_u64() % 40) as i32 - 20);
        xs.push(digits * scale);
        xs.push(digits / scale);
        xs.push(k as f64);
        xs.push((1u64 << 53) as f64 - k as f64);
        xs.push(10f64.powi((k % 600) as i32 - 300));
    }
    xs
}

#[test]
fn gpu_double_text_matches_the_cpu_twin() {
    let dir = std::env::temp_dir().join(format!("gpusql-double-text-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let src = dir.join("double_text.c");
    let source =
        [HARNESS, include_str!("../src/double_text_tables.cu"), include_str!("../src/double_text.cu"), MAIN].concat();
    std::fs::write(&src, source).unwrap();
    let exe = dir.join("double_text");
    let built = Command::new("cc")
        .args(["-O2", "-std=gnu11", "-o"])
        .arg(&exe)
        .arg(&src)
        .output()
        .expect("the C compiler (cc) that links Rust programs");
    assert!(built.status.success(), "cc: {}", String::from_utf8_lossy(&built.stderr));
    let xs = inputs();
    let list = dir.join("inputs.txt");
    let mut f = std::io::BufWriter::new(std::fs::File::create(&list).unwrap());
    for x in &xs {
        writeln!(f, "{:x}", x.to_bits()).unwrap();
    }
    drop(f);
    let run = Command::new(&exe).arg(&list).output().unwrap();
    assert!(run.status.success(), "the harness failed: {:?}", run.status);
    let out = String::from_utf8(run.stdout).unwrap();
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), xs.len());
    let wrong: Vec<String> = xs
        .iter()
        .zip(&lines)
        .filter(|(x, text)| double_text(**x) != **text)
        .take(10)
        .map(|(x, text)| format!("{:#x} ({x:e}): GPU {text}, CPU {}", x.to_bits(), double_text(*x)))
        .collect();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(wrong.is_empty(), "{} values differ, the first:\n{}", wrong.len(), wrong.join("\n"));
}
