//! The `cfs-sim` command line: a thin shell over [`cfs_sim::cli`].

fn main() {
    if std::env::var_os("RUST_LOG").is_some() {
        // Decision logging: cfs-core's events at TRACE, target `cfs_core`.
        tracing_subscriber::fmt()
            .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
            .with_writer(std::io::stderr)
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .init();
    }
    let args: Vec<String> = std::env::args().collect();
    if let Err(msg) = cfs_sim::cli::main_with(&args) {
        if !msg.is_empty() {
            let one_line = msg.lines().next().unwrap_or("").trim_start_matches("error: ");
            eprintln!("cfs-sim: error: {one_line}");
            std::process::exit(2);
        }
    }
}
