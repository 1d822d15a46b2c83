//! Prints a host summary and the sched domains a kernel builds for it.
//!
//! `cargo run -p cfs-topology --example topology -- HOST [VERSION] [OVERRIDES]`
//! where HOST is a preset name, a spec string or a TOML file path.

use cfs_topology::{
    Host, KernelVersion, parse_any, parse_flag_overrides_for, render_host_summary, render_kernel_debug,
};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let host_arg = args.first().map(String::as_str).unwrap_or("q6600");
    let host = match std::path::Path::new(host_arg).is_file() {
        true => Host::from_toml_file(std::path::Path::new(host_arg))?,
        false => parse_any(host_arg)?,
    };
    let version: KernelVersion = args.get(1).map(String::as_str).unwrap_or("2.6.26").parse()?;
    let mut domains = host.build_domains(version);
    if let Some(o) = args.get(2) {
        domains.apply_overrides(&parse_flag_overrides_for(o, version)?);
    }
    print!("{}", render_host_summary(&host));
    println!("--- {version}");
    print!("{}", render_kernel_debug(&domains));
    Ok(())
}
