//! The process's stdin and stdout as non-blocking streams on the event loop.
//!
//! A pipe (what most clients give a server) or a Unix socket (what libuv-based
//! clients such as Node give it) is duplicated and registered with the reactor,
//! so reads and writes happen on the thread that handles the messages. Anything
//! else (a terminal, a regular file) goes through `tokio::io::stdin`/`stdout`.

use std::fs::File;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::FileTypeExt;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::UnixStream;
use tokio::net::unix::pipe;

/// The process's stdin, as fast as it can be read.
pub(super) enum Reader {
    /// A pipe, on the event loop.
    Pipe(pipe::Receiver),
    /// A Unix socket, on the event loop.
    Socket(UnixStream),
    /// Anything else, through the blocking pool.
    Std(tokio::io::Stdin),
}

/// The process's stdout, as fast as it can be written.
pub(super) enum Writer {
    /// A pipe, on the event loop.
    Pipe(pipe::Sender),
    /// A Unix socket, on the event loop.
    Socket(UnixStream),
    /// Anything else, through the blocking pool.
    Std(tokio::io::Stdout),
}

enum Kind {
    Fifo,
    Socket,
    Other,
}

/// A duplicate of `fd` and what kind of file it is.
fn duplicate(fd: BorrowedFd<'_>) -> Option<(OwnedFd, Kind)> {
    let owned = fd.try_clone_to_owned().ok()?;
    let file = File::from(owned);
    let kind = match file.metadata() {
        Ok(m) if m.file_type().is_fifo() => Kind::Fifo,
        Ok(m) if m.file_type().is_socket() => Kind::Socket,
        _ => Kind::Other,
    };
    Some((OwnedFd::from(file), kind))
}

fn socket(fd: OwnedFd) -> Option<UnixStream> {
    let std = std::os::unix::net::UnixStream::from(fd);
    std.set_nonblocking(true).ok()?;
    UnixStream::from_std(std).ok()
}

/// Stdin on the event loop when it is a pipe or a socket.
pub(super) fn reader() -> Reader {
    fast_reader(std::io::stdin().as_fd()).unwrap_or_else(|| Reader::Std(tokio::io::stdin()))
}

/// A duplicate of `fd` on the event loop, when it is a pipe or a socket.
fn fast_reader(fd: BorrowedFd<'_>) -> Option<Reader> {
    match duplicate(fd) {
        Some((fd, Kind::Fifo)) => pipe::Receiver::from_owned_fd(fd).ok().map(Reader::Pipe),
        Some((fd, Kind::Socket)) => socket(fd).map(Reader::Socket),
        _ => None,
    }
}

/// Whether two descriptors are the same file (as with `2>&1`).
fn same_file(a: BorrowedFd<'_>, b: BorrowedFd<'_>) -> bool {
    use std::os::unix::fs::MetadataExt;
    let meta = |fd: BorrowedFd<'_>| {
        fd.try_clone_to_owned()
            .ok()
            .and_then(|fd| File::from(fd).metadata().ok())
            .map(|m| (m.dev(), m.ino()))
    };
    match (meta(a), meta(b)) {
        (Some(x), Some(y)) => x == y,
        _ => true,
    }
}

/// Stdout on the event loop when it is a pipe or a socket. Not when stderr is
/// the same pipe (`2>&1`): making stdout non-blocking would make stderr
/// non-blocking too, and a log line could then fail to be written.
pub(super) fn writer() -> Writer {
    let stdout = std::io::stdout();
    if same_file(stdout.as_fd(), std::io::stderr().as_fd()) {
        return Writer::Std(tokio::io::stdout());
    }
    fast_writer(stdout.as_fd()).unwrap_or_else(|| Writer::Std(tokio::io::stdout()))
}

/// A duplicate of `fd` on the event loop, when it is a pipe or a socket.
fn fast_writer(fd: BorrowedFd<'_>) -> Option<Writer> {
    match duplicate(fd) {
        Some((fd, Kind::Fifo)) => pipe::Sender::from_owned_fd(fd).ok().map(Writer::Pipe),
        Some((fd, Kind::Socket)) => socket(fd).map(Writer::Socket),
        _ => None,
    }
}

impl AsyncRead for Reader {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Reader::Pipe(r) => Pin::new(r).poll_read(cx, buf),
            Reader::Socket(r) => Pin::new(r).poll_read(cx, buf),
            Reader::Std(r) => Pin::new(r).poll_read(cx, buf),
        }
    }
}

impl AsyncWrite for Writer {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            Writer::Pipe(w) => Pin::new(w).poll_write(cx, buf),
            Writer::Socket(w) => Pin::new(w).poll_write(cx, buf),
            Writer::Std(w) => Pin::new(w).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            Writer::Pipe(w) => Pin::new(w).poll_flush(cx),
            Writer::Socket(w) => Pin::new(w).poll_flush(cx),
            Writer::Std(w) => Pin::new(w).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            // Shutting a socket down would close the client's read side early;
            // the process exiting closes it.
            Writer::Socket(_) => Poll::Ready(Ok(())),
            Writer::Pipe(w) => Pin::new(w).poll_shutdown(cx),
            Writer::Std(w) => Pin::new(w).poll_shutdown(cx),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};
    use std::os::fd::AsFd;

    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    use super::*;

    /// A pipe pair from the OS (what Python's subprocess gives a server).
    fn os_pipe() -> (File, File) {
        let (rx, tx) = std::io::pipe().unwrap();
        (File::from(OwnedFd::from(rx)), File::from(OwnedFd::from(tx)))
    }

    #[tokio::test]
    async fn pipes_are_read_and_written_on_the_event_loop() {
        let (rx, mut client_tx) = os_pipe();
        let mut reader = fast_reader(rx.as_fd()).expect("a pipe is fast");
        assert!(matches!(reader, Reader::Pipe(_)));
        client_tx.write_all(b"{\"id\":1}\n").unwrap();
        let mut buf = [0u8; 9];
        reader.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"{\"id\":1}\n");

        let (mut client_rx, tx) = os_pipe();
        let mut writer = fast_writer(tx.as_fd()).expect("a pipe is fast");
        assert!(matches!(writer, Writer::Pipe(_)));
        writer.write_all(b"reply\n").await.unwrap();
        writer.flush().await.unwrap();
        drop(writer);
        drop(tx);
        let mut got = String::new();
        client_rx.read_to_string(&mut got).unwrap();
        assert_eq!(got, "reply\n");
    }

    #[tokio::test]
    async fn sockets_are_read_and_written_on_the_event_loop() {
        // What libuv (Node) clients give a server as its stdio.
        let (mut client, server) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut reader = fast_reader(server.as_fd()).expect("a socket is fast");
        let mut writer = fast_writer(server.as_fd()).expect("a socket is fast");
        assert!(matches!(reader, Reader::Socket(_)));
        client.write_all(b"ping\n").unwrap();
        let mut buf = [0u8; 5];
        reader.read_exact(&mut buf).await.unwrap();
        assert_eq!(&buf, b"ping\n");
        writer.write_all(b"pong\n").await.unwrap();
        writer.shutdown().await.unwrap();
        let mut back = [0u8; 5];
        client.read_exact(&mut back).unwrap();
        assert_eq!(&back, b"pong\n");
    }

    #[test]
    fn regular_files_fall_back_and_shared_output_is_detected() {
        let file = tempfile::tempfile().unwrap();
        assert!(fast_reader(file.as_fd()).is_none());
        assert!(fast_writer(file.as_fd()).is_none());
        let (rx, tx) = os_pipe();
        let dup = tx.try_clone().unwrap();
        assert!(same_file(tx.as_fd(), dup.as_fd()), "2>&1 shares the pipe");
        drop(rx);
        assert!(!same_file(tx.as_fd(), file.as_fd()));
    }
}
