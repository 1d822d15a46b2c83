//! The `cfs-sim` command line: a thin shell over [`cfs_sim::cli`].

use tracing_subscriber::filter::Targets;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;

fn main() {
    if let Some(spec) = std::env::var_os("RUST_LOG") {
        // Decision logging: cfs-core's events at TRACE, target `cfs_core`.
        // RUST_LOG takes `level` or `target=level` directives, comma-separated.
        match spec.to_string_lossy().parse::<Targets>() {
            Ok(filter) => tracing_subscriber::registry()
                .with(
                    tracing_subscriber::fmt::layer()
                        .with_writer(std::io::stderr)
                        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr())),
                )
                .with(filter)
                .init(),
            Err(e) => {
                eprintln!("cfs-sim: error: RUST_LOG: {e} (expected e.g. cfs_core=trace or debug)");
                std::process::exit(2);
            }
        }
    }
    let args: Vec<String> = std::env::args().collect();
    if let Err(msg) = cfs_sim::cli::main_with(&args) {
        if !msg.is_empty() {
            // The first paragraph, on one line: clap puts what is missing
            // on the lines after its first ("... not provided:\n  <FILE>").
            let first: Vec<&str> = msg.lines().map(str::trim).take_while(|l| !l.is_empty()).collect();
            let one_line = first.join(" ");
            eprintln!("cfs-sim: error: {}", one_line.trim_start_matches("error: "));
            std::process::exit(2);
        }
    }
}
