//! TLS for `https://` servers: rustls (ring), trusting the system's roots — the file or folder
//! `SSL_CERT_FILE` / `SSL_CERT_DIR` name, else the platform's store — or, when none can be read,
//! Mozilla's roots built in (a container with no CA bundle still reaches public servers).

use std::sync::Arc;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;
use tokio_rustls::rustls::pki_types::ServerName;
use tokio_rustls::rustls::{ClientConfig, RootCertStore, crypto};

use crate::error::Error;

/// How one endpoint's connections are secured: the name its certificate must carry and the
/// configuration shared by every connection to it.
pub(crate) struct Tls {
    connector: TlsConnector,
    name: ServerName<'static>,
    roots: RootsFrom,
}

/// Where the trusted roots came from, said in a failed handshake's error.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum RootsFrom {
    System(usize),
    Bundled,
}

impl Tls {
    /// The TLS side of `https://{host}`; `host` as the URL gives it (an IPv6 address in
    /// brackets).
    pub(crate) fn for_host(host: &str) -> Result<Tls, Error> {
        let bare = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        let name = ServerName::try_from(bare.to_owned()).map_err(|err| {
            Error::InvalidArgument(format!(
                "{host:?} cannot be checked against a certificate: {err}"
            ))
        })?;
        let (store, roots) = roots(rustls_native_certs::load_native_certs());
        let config =
            ClientConfig::builder_with_provider(Arc::new(crypto::ring::default_provider()))
                .with_safe_default_protocol_versions()
                .map_err(|err| {
                    Error::Transport(std::io::Error::other(format!(
                        "TLS cannot be set up: {err}"
                    )))
                })?
                .with_root_certificates(store)
                .with_no_client_auth();
        let mut config = config;
        // The client speaks HTTP/1.1 only; a server offering h2 first must not pick it.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(Tls {
            connector: TlsConnector::from(Arc::new(config)),
            name,
            roots,
        })
    }

    /// Secures `stream`, connected to `address`, checking the server's certificate.
    pub(crate) async fn connect<S>(&self, stream: S, address: &str) -> Result<TlsStream<S>, String>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        self.connector
            .connect(self.name.clone(), stream)
            .await
            .map_err(|err| {
                let trusted = match self.roots {
                    RootsFrom::System(count) => format!(
                        "{count} roots from the system (SSL_CERT_FILE or SSL_CERT_DIR name others)"
                    ),
                    RootsFrom::Bundled => "Mozilla's roots, as none could be read from \
                                           SSL_CERT_FILE, SSL_CERT_DIR or the system's store"
                        .to_owned(),
                };
                format!("the TLS handshake with {address} failed: {err} (trusted: {trusted})")
            })
    }
}

/// The roots to trust: what the system gave that parses, or Mozilla's when nothing did.
fn roots(found: rustls_native_certs::CertificateResult) -> (RootCertStore, RootsFrom) {
    let mut store = RootCertStore::empty();
    let (added, _ignored) = store.add_parsable_certificates(found.certs);
    if added > 0 {
        for err in &found.errors {
            tracing::debug!(%err, "a certificate store could not be read");
        }
        return (store, RootsFrom::System(added));
    }
    // Trust widened to Mozilla's roots: said where operators look.
    for err in &found.errors {
        tracing::warn!(%err, "a certificate store could not be read");
    }
    tracing::warn!("no trusted roots could be read; trusting Mozilla's roots built in");
    let mut store = RootCertStore::empty();
    store.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    (store, RootsFrom::Bundled)
}

#[cfg(test)]
mod tests {
    use tokio_rustls::rustls::pki_types::CertificateDer;

    use super::*;

    #[test]
    fn no_system_roots_falls_back_to_mozillas() {
        let (store, from) = roots(rustls_native_certs::CertificateResult::default());
        assert_eq!(from, RootsFrom::Bundled);
        assert!(
            store.len() > 100,
            "Mozilla's roots, {} of them",
            store.len()
        );
    }

    #[test]
    fn roots_that_do_not_parse_fall_back_to_mozillas() {
        let mut found = rustls_native_certs::CertificateResult::default();
        found
            .certs
            .push(CertificateDer::from(b"not a certificate".to_vec()));
        let (_, from) = roots(found);
        assert_eq!(from, RootsFrom::Bundled);
    }

    #[test]
    fn hosts_are_names_or_addresses() {
        for host in ["example.com", "localhost", "127.0.0.1", "[::1]"] {
            assert!(Tls::for_host(host).is_ok(), "{host}");
        }
        let bad = Tls::for_host("bad name!").err().map(|e| e.to_string());
        assert!(bad.is_some_and(|e| e.contains("cannot be checked against a certificate")));
    }
}
