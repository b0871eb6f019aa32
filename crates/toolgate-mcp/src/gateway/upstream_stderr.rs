//! A stdio upstream's stderr, passed on to toolgate's own line by line, each
//! line named after its upstream and with its hidden characters escaped.
//!
//! Inherited as it was, an upstream's stderr reached the terminal that ran
//! toolgate untouched: a server could clear the screen or rewrite the lines
//! above (a pending approval, a pin diff) with escape sequences. A line past
//! [`MAX_LINE`] bytes is cut, so an endless one holds no memory.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use toolgate_core::visible::escape_hidden;

/// The longest line passed on, in bytes; the rest of it is dropped.
pub(crate) const MAX_LINE: usize = 8 * 1024;

/// Copies `from` to `to` until either ends: `upstream NAME: LINE` for each
/// line, tabs kept, other hidden characters as `\u{…}`.
pub(crate) async fn forward(
    name: &str,
    mut from: impl AsyncRead + Unpin,
    mut to: impl AsyncWrite + Unpin,
) {
    let mut buf = vec![0u8; 8192];
    let mut line = Vec::new();
    let mut cut = false;
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        for &byte in &buf[..n] {
            if byte == b'\n' {
                if emit(name, &line, cut, &mut to).await.is_err() {
                    return;
                }
                line.clear();
                cut = false;
            } else if line.len() < MAX_LINE {
                line.push(byte);
            } else {
                cut = true;
            }
        }
    }
    if !line.is_empty() {
        let _ = emit(name, &line, cut, &mut to).await;
    }
}

async fn emit(
    name: &str,
    line: &[u8],
    cut: bool,
    to: &mut (impl AsyncWrite + Unpin),
) -> std::io::Result<()> {
    let text = String::from_utf8_lossy(line);
    let shown = escape_hidden(text.trim_end_matches('\r'), &['\t']);
    let more = if cut { " […]" } else { "" };
    let out = format!("upstream {}: {shown}{more}\n", escape_hidden(name, &[]));
    to.write_all(out.as_bytes()).await?;
    to.flush().await
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn forwarded(input: &[u8]) -> String {
        let mut out = Vec::new();
        forward("fs", input, &mut out).await;
        String::from_utf8(out).unwrap()
    }

    /// An upstream that writes `ESC[2J` (clear the screen) and a cursor move
    /// to its stderr reached toolgate's terminal as it was.
    #[tokio::test]
    async fn an_upstreams_escape_sequences_do_not_reach_the_terminal() {
        let out = forwarded(b"ready\x1b[2J\x1b[H\tok\r\nsecond \xe2\x80\xae line\nlast").await;
        assert!(
            !out.contains('\u{1b}') && !out.contains('\u{202e}'),
            "{out:?}"
        );
        assert_eq!(
            out,
            "upstream fs: ready\\u{001B}[2J\\u{001B}[H\tok\n\
             upstream fs: second \\u{202E} line\n\
             upstream fs: last\n"
        );
    }

    #[tokio::test]
    async fn a_line_past_the_limit_is_cut() {
        let mut long = vec![b'x'; MAX_LINE * 3];
        long.extend_from_slice(b"\nnext\n");
        let out = forwarded(&long).await;
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 2, "{}", lines.len());
        assert!(lines[0].ends_with(" […]"));
        assert_eq!(
            lines[0].len(),
            "upstream fs: ".len() + MAX_LINE + " […]".len()
        );
        assert_eq!(lines[1], "upstream fs: next");
    }
}
