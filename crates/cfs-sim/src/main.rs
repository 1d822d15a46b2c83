//! The `cfs-sim` command line.

fn main() {
    eprintln!("cfs-sim: the machine model arrives with the simulator issue; nothing runs yet");
    std::process::exit(2);
}
