//! Logging inside engine libraries.
//!
//! Each engine is a shared object with its own copy of `tracing`, so the runtime's
//! subscriber never sees its events: before this, an engine's warnings (no C compiler,
//! a refused cache directory) went nowhere, and even `HASSIUM_LOG=trace` showed nothing
//! of them. An engine calls [`init_engine_logging`] when it is created: with
//! `HASSIUM_LOG` set, its events go to stderr under that filter, as the runtime's do;
//! without it, each distinct warning or error is printed once per process as one line,
//! `hassium: <engine> engine: <message>`.

use std::collections::HashSet;
use std::fmt::Write as _;
use std::sync::{Mutex, Once};
use tracing::field::{Field, Visit};
use tracing::{Event, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};

/// Installs this library's log subscriber (once; later calls do nothing).
pub fn init_engine_logging(engine: &'static str) {
    static INIT: Once = Once::new();
    INIT.call_once(|| match std::env::var("HASSIUM_LOG") {
        Ok(filter) => {
            let _ = tracing_subscriber::fmt()
                .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
                .with_writer(std::io::stderr)
                .try_init();
        }
        Err(_) => {
            let subscriber = tracing_subscriber::registry().with(WarnOnce {
                engine,
                seen: Mutex::new(HashSet::new()),
            });
            let _ = tracing::subscriber::set_global_default(subscriber);
        }
    });
}

/// Prints each distinct warning or error once, as one line on stderr.
struct WarnOnce {
    engine: &'static str,
    seen: Mutex<HashSet<String>>,
}

/// The text of an event: its message and any other fields.
#[derive(Default)]
struct Message(String);

impl Visit for Message {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        if field.name() == "message" {
            let _ = write!(self.0, "{value:?}");
        } else {
            let _ = write!(self.0, " {}={value:?}", field.name());
        }
    }
}

/// The line [`WarnOnce`] prints for `message` of `engine`: one line, however many the
/// message has (a compiler's stderr is cut to its first line).
pub fn warning_line(engine: &str, message: &str) -> String {
    let first = message.lines().next().unwrap_or("");
    let more = if message.lines().nth(1).is_some() {
        " (…)"
    } else {
        ""
    };
    format!("hassium: {engine} engine: {first}{more}")
}

impl<S: Subscriber> Layer<S> for WarnOnce {
    fn on_event(&self, event: &Event<'_>, _ctx: Context<'_, S>) {
        if *event.metadata().level() > Level::WARN {
            return;
        }
        let mut m = Message::default();
        event.record(&mut m);
        let fresh = (self.seen.lock())
            .map(|mut s| s.insert(m.0.clone()))
            .unwrap_or(false);
        if fresh {
            eprintln!("{}", warning_line(self.engine, &m.0));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_warning_is_one_line_naming_the_engine() {
        assert_eq!(
            warning_line("cpu", "C compiler `cc` not found"),
            "hassium: cpu engine: C compiler `cc` not found"
        );
        assert_eq!(
            warning_line("cpu", "compiling failed:\nerror: x\nerror: y"),
            "hassium: cpu engine: compiling failed: (…)"
        );
    }
}
