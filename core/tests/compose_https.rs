//! Mounting a server over `https://`: a toolwire server behind a TLS terminator whose
//! certificate a test CA signed, trusted through `SSL_CERT_FILE` as a user would, mounted by
//! name and by address and called in either era. A certificate no trusted root signed, or one
//! for another name, is refused with an error that says so.
//!
//! One test in this binary: it sets `SSL_CERT_FILE` for the process before any thread of its
//! own starts.

use std::net::SocketAddr;
use std::sync::Arc;

use rcgen::{BasicConstraints, CertificateParams, CertifiedIssuer, IsCa, KeyPair, KeyUsagePurpose};
use serde_json::{Value, json};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::ServerConfig;
use tokio_rustls::rustls::crypto::ring;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use toolwire::client::{Client, ClientOptions};
use toolwire::compose::Upstream;
use toolwire::transport::http::HttpOptions;
use toolwire::{Context, Server, Tool, ToolError, ToolOutput};

async fn echo(_ctx: Context, args: Value) -> Result<ToolOutput, ToolError> {
    Ok(ToolOutput::text(format!(
        "echo: {}",
        args["text"].as_str().unwrap_or("")
    )))
}

/// A certificate authority of the test's own.
fn authority(name: &str) -> CertifiedIssuer<'static, KeyPair> {
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA parameters");
    params
        .distinguished_name
        .push(rcgen::DnType::CommonName, name);
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let key = KeyPair::generate().expect("a CA key");
    CertifiedIssuer::self_signed(params, key).expect("a CA certificate")
}

/// A server certificate for `names` (DNS names or IP addresses), signed by `ca`.
fn leaf(
    ca: &CertifiedIssuer<'static, KeyPair>,
    names: &[&str],
) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let params = CertificateParams::new(names).expect("leaf parameters");
    let key = KeyPair::generate().expect("a leaf key");
    let cert = params.signed_by(&key, ca).expect("a leaf certificate");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    (cert.der().clone(), key)
}

/// A TLS terminator in front of `backend`: each connection's bytes, decrypted, go to it.
async fn terminator(
    cert: CertificateDer<'static>,
    key: PrivateKeyDer<'static>,
    backend: SocketAddr,
) -> SocketAddr {
    let config = ServerConfig::builder_with_provider(Arc::new(ring::default_provider()))
        .with_safe_default_protocol_versions()
        .expect("TLS versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert], key)
        .expect("a server configuration");
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let address = listener.local_addr().expect("an address");
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            tokio::spawn(async move {
                // A refused handshake ends this connection only.
                let Ok(mut secured) = acceptor.accept(stream).await else {
                    return;
                };
                let Ok(mut plain) = TcpStream::connect(backend).await else {
                    return;
                };
                let _ = tokio::io::copy_bidirectional(&mut secured, &mut plain).await;
            });
        }
    });
    address
}

async fn call_through(outer: &Server, version: &str, tool: &str) -> String {
    let mut options = ClientOptions::default();
    options.protocol_version = version.into();
    let client = Client::connect(outer, options, None)
        .await
        .expect("a client");
    let result = client
        .call_tool(tool, json!({"text": version}), None)
        .await
        .expect("a call");
    client.close().await;
    result["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned()
}

#[test]
fn an_https_server_is_mounted_when_its_certificate_is_trusted() {
    let trusted = authority("toolwire test CA");
    let folder = std::env::temp_dir().join(format!("toolwire-https-{}", std::process::id()));
    std::fs::create_dir_all(&folder).expect("a folder");
    let ca_file = folder.join("ca.pem");
    std::fs::write(&ca_file, trusted.pem()).expect("the CA written");
    // SAFETY: no other thread of this process reads the environment yet (this binary's only
    // test, before its runtime starts).
    unsafe {
        std::env::set_var("SSL_CERT_FILE", &ca_file);
        std::env::remove_var("SSL_CERT_DIR");
    }
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let inner = Server::builder("weather", "1")
            .tool(
                Tool::new("echo").input_schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"]
                })),
                echo,
            )
            .build()
            .expect("a server");
        let plain = inner
            .serve_http("127.0.0.1:0", HttpOptions::default())
            .await
            .expect("serving");
        let backend = plain.local_addr();

        let (cert, key) = leaf(&trusted, &["localhost", "127.0.0.1"]);
        let secured = terminator(cert, key, backend).await;
        let outer = Server::builder("gateway", "1").build().expect("a server");
        let port = secured.port();
        outer
            .mount(
                "named",
                Upstream::http(format!("https://localhost:{port}/mcp")),
            )
            .await
            .expect("mounted by name");
        outer
            .mount(
                "addressed",
                Upstream::http(format!("https://127.0.0.1:{port}/mcp")),
            )
            .await
            .expect("mounted by address");
        for version in ["2025-11-25", "2026-07-28"] {
            assert_eq!(
                call_through(&outer, version, "named_echo").await,
                format!("echo: {version}")
            );
            assert_eq!(
                call_through(&outer, version, "addressed_echo").await,
                format!("echo: {version}")
            );
        }

        // Signed by a CA nobody trusts.
        let stranger = authority("someone else's CA");
        let (cert, key) = leaf(&stranger, &["localhost"]);
        let untrusted = terminator(cert, key, backend).await;
        let err = outer
            .mount(
                "untrusted",
                Upstream::http(format!("https://localhost:{}/mcp", untrusted.port())),
            )
            .await
            .expect_err("an unknown issuer");
        let text = err.to_string();
        assert!(text.contains("TLS handshake"), "{text}");
        assert!(text.contains("UnknownIssuer"), "{text}");
        assert!(text.contains("SSL_CERT_FILE"), "{text}");

        // Trusted, but for another name.
        let (cert, key) = leaf(&trusted, &["elsewhere.example"]);
        let misnamed = terminator(cert, key, backend).await;
        let err = outer
            .mount(
                "misnamed",
                Upstream::http(format!("https://localhost:{}/mcp", misnamed.port())),
            )
            .await
            .expect_err("a certificate for another name");
        let text = err.to_string();
        assert!(text.contains("not valid for name"), "{text}");

        // The mounts that failed left nothing behind; the good ones still answer.
        let mut options = ClientOptions::default();
        options.protocol_version = "2026-07-28".into();
        let client = Client::connect(&outer, options, None)
            .await
            .expect("a client");
        let names: Vec<String> = client
            .list_tools()
            .await
            .expect("tools")
            .iter()
            .map(|t| t["name"].as_str().unwrap_or("").to_owned())
            .collect();
        assert_eq!(names, ["addressed_echo", "named_echo"]);
        client.close().await;
        plain.shutdown().await;
    });
    let _ = std::fs::remove_dir_all(&folder);
}
