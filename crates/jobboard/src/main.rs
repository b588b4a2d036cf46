//! The `jobboard` command: `serve`, `migrate`, `orgs`, `keys`, `plans`, `openapi`,
//! `config` (see `cli`).

mod cli;

use std::process::ExitCode;

use clap::Parser;

#[cfg(feature = "jemalloc")]
#[global_allocator]
static ALLOCATOR: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

/// jemalloc's figures (refreshed first: it keeps them per epoch).
#[cfg(feature = "jemalloc")]
fn jemalloc_stats() -> Option<jobboard_app::metrics::AllocatorStats> {
    use tikv_jemalloc_ctl::{epoch, stats};
    epoch::advance().ok()?;
    Some(jobboard_app::metrics::AllocatorStats {
        allocated: stats::allocated::read().ok()? as u64,
        resident: stats::resident::read().ok()? as u64,
    })
}

fn main() -> ExitCode {
    let cli = cli::Cli::parse();
    #[cfg(feature = "jemalloc")]
    jobboard_app::metrics::set_allocator_stats(jemalloc_stats);
    jobboard::init_tls();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli::run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}
