//! TLS for [`WebhookServer`](super::WebhookServer): a certificate chain and its private key,
//! read from PEM, and self-signed certificates for tests, demos and local clusters.
//!
//! Everything here runs on rustls with the `ring` crypto provider.

use std::fmt;
use std::fs::{self, OpenOptions};
use std::io::{self, Write as _};
use std::net::IpAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use rcgen::{
    CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, KeyPair, SanType,
};
use rustls::ServerConfig;
use rustls_pki_types::pem::{self, PemObject};
use rustls_pki_types::{CertificateDer, PrivateKeyDer};

/// The name [`SelfSignedCertificate::write_to`] gives the certificate, as in a
/// `kubernetes.io/tls` Secret.
///
/// ```
/// assert_eq!(recon_core::admission::TLS_CERT_FILE, "tls.crt");
/// ```
pub const TLS_CERT_FILE: &str = "tls.crt";

/// The name [`SelfSignedCertificate::write_to`] gives the private key, as in a
/// `kubernetes.io/tls` Secret.
///
/// ```
/// assert_eq!(recon_core::admission::TLS_KEY_FILE, "tls.key");
/// ```
pub const TLS_KEY_FILE: &str = "tls.key";

/// Where PEM text came from, as a [`TlsError`] names it.
///
/// ```
/// use recon_core::admission::PemSource;
///
/// assert_eq!(PemSource::File("/certs/tls.crt".into()).to_string(), "/certs/tls.crt");
/// assert_eq!(PemSource::CertificatePem.to_string(), "the certificate chain PEM");
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PemSource {
    /// The certificate chain handed to [`TlsConfig::from_pem`].
    CertificatePem,
    /// The private key handed to [`TlsConfig::from_pem`].
    KeyPem,
    /// A file read by [`TlsConfig::from_pem_files`].
    File(PathBuf),
}

impl fmt::Display for PemSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PemSource::CertificatePem => f.write_str("the certificate chain PEM"),
            PemSource::KeyPem => f.write_str("the private key PEM"),
            PemSource::File(path) => write!(f, "{}", path.display()),
        }
    }
}

/// Why a [`TlsConfig`] or a [`SelfSignedCertificate`] could not be made or written.
///
/// ```
/// use recon_core::admission::{PemSource, TlsConfig, TlsError};
///
/// let err = TlsConfig::from_pem("", "").unwrap_err();
/// assert!(matches!(err, TlsError::NoCertificate { from: PemSource::CertificatePem }));
/// assert_eq!(
///     err.to_string(),
///     "no certificate in the certificate chain PEM: expected a `-----BEGIN CERTIFICATE-----` block"
/// );
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TlsError {
    /// A file cannot be read (it is missing, say).
    #[error("cannot read {}: {source}", path.display())]
    Read {
        /// The file.
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
    /// The text is not well-formed PEM.
    #[error("{from} is not valid PEM: {message}")]
    Pem {
        /// Where the text came from.
        from: PemSource,
        /// What is wrong with it.
        message: String,
    },
    /// The certificate chain holds no certificate.
    #[error("no certificate in {from}: expected a `-----BEGIN CERTIFICATE-----` block")]
    NoCertificate {
        /// Where the chain came from.
        from: PemSource,
    },
    /// The key holds no private key.
    #[error(
        "no private key in {from}: expected a `PRIVATE KEY`, `RSA PRIVATE KEY` or `EC PRIVATE KEY` block"
    )]
    NoPrivateKey {
        /// Where the key came from.
        from: PemSource,
    },
    /// The private key is not the key of the (first) certificate of the chain.
    #[error("the private key in {key} does not match the certificate in {cert}")]
    KeyMismatch {
        /// Where the chain came from.
        cert: PemSource,
        /// Where the key came from.
        key: PemSource,
    },
    /// rustls cannot serve with this certificate and key (an unsupported key type, say).
    #[error("cannot serve TLS with the certificate in {cert} and the key in {key}: {source}")]
    Rejected {
        /// Where the chain came from.
        cert: PemSource,
        /// Where the key came from.
        key: PemSource,
        /// What rustls said.
        source: rustls::Error,
    },
    /// [`SelfSignedCertificate::generate`] was given no name to certify.
    #[error("a self-signed certificate needs at least one subject alternative name")]
    NoSubjectAltName,
    /// The certificate cannot be generated (a name that is not a valid DNS name, say).
    #[error("cannot generate a self-signed certificate: {message}")]
    Generate {
        /// What went wrong.
        message: String,
    },
    /// A file cannot be written.
    #[error("cannot write {}: {source}", path.display())]
    Write {
        /// The file (or the directory it goes in).
        path: PathBuf,
        /// What the operating system said.
        source: io::Error,
    },
}

/// The certificate and key a [`WebhookServer`](super::WebhookServer) serves HTTPS with: a
/// rustls server configuration on the `ring` provider, offering HTTP/1.1 over ALPN.
///
/// kube-apiserver only calls webhooks over HTTPS, and checks the certificate against the
/// `caBundle` of the webhook configuration, for the service's DNS name
/// (`<service>.<namespace>.svc`) or the host of the `url`.
///
/// ```
/// use recon_core::admission::{SelfSignedCertificate, TlsConfig};
///
/// let generated = SelfSignedCertificate::generate(&["localhost"]).unwrap();
/// let tls = TlsConfig::from_pem(generated.cert_pem(), generated.key_pem()).unwrap();
/// assert_eq!(tls.server_config().alpn_protocols, [b"http/1.1".to_vec()]);
/// ```
#[derive(Debug, Clone)]
pub struct TlsConfig {
    server: Arc<ServerConfig>,
}

impl TlsConfig {
    /// Serves the certificate chain `cert_chain_pem` (the server's certificate first, then
    /// any intermediates) with the private key `key_pem` (PKCS#8, PKCS#1 or SEC1).
    ///
    /// ```
    /// use recon_core::admission::{SelfSignedCertificate, TlsConfig, TlsError};
    ///
    /// let ours = SelfSignedCertificate::generate(&["webhook.default.svc"]).unwrap();
    /// assert!(TlsConfig::from_pem(ours.cert_pem(), ours.key_pem()).is_ok());
    ///
    /// let theirs = SelfSignedCertificate::generate(&["other.default.svc"]).unwrap();
    /// let err = TlsConfig::from_pem(ours.cert_pem(), theirs.key_pem()).unwrap_err();
    /// assert!(matches!(err, TlsError::KeyMismatch { .. }), "{err}");
    /// ```
    pub fn from_pem(
        cert_chain_pem: impl AsRef<[u8]>,
        key_pem: impl AsRef<[u8]>,
    ) -> Result<Self, TlsError> {
        Self::from_pem_of(
            cert_chain_pem.as_ref(),
            PemSource::CertificatePem,
            key_pem.as_ref(),
            PemSource::KeyPem,
        )
    }

    /// Serves the certificate chain in the PEM file `cert_path` with the private key in the
    /// PEM file `key_path`: the `tls.crt` and `tls.key` of a mounted `kubernetes.io/tls`
    /// Secret, say. The files are read once, now.
    ///
    /// ```
    /// use recon_core::admission::{TlsConfig, TlsError};
    ///
    /// let err = TlsConfig::from_pem_files("/no/such/tls.crt", "/no/such/tls.key").unwrap_err();
    /// assert!(matches!(&err, TlsError::Read { path, .. } if path.ends_with("tls.crt")));
    /// assert!(err.to_string().starts_with("cannot read /no/such/tls.crt: "), "{err}");
    /// ```
    pub fn from_pem_files(
        cert_path: impl AsRef<Path>,
        key_path: impl AsRef<Path>,
    ) -> Result<Self, TlsError> {
        let cert_path = cert_path.as_ref();
        let key_path = key_path.as_ref();
        let read = |path: &Path| {
            fs::read(path).map_err(|source| TlsError::Read {
                path: path.to_owned(),
                source,
            })
        };
        let cert_pem = read(cert_path)?;
        let key_pem = read(key_path)?;
        Self::from_pem_of(
            &cert_pem,
            PemSource::File(cert_path.to_owned()),
            &key_pem,
            PemSource::File(key_path.to_owned()),
        )
    }

    /// Serves with a rustls configuration of your own (to ask clients for certificates, say).
    /// The server speaks HTTP/1.1 whatever protocols its ALPN lists.
    ///
    /// ```
    /// use recon_core::admission::{SelfSignedCertificate, TlsConfig};
    ///
    /// let generated = SelfSignedCertificate::generate(&["localhost"]).unwrap();
    /// let ours = generated.tls_config().unwrap().server_config();
    /// let tls = TlsConfig::from_server_config(ours.clone());
    /// assert!(std::sync::Arc::ptr_eq(&tls.server_config(), &ours));
    /// ```
    pub fn from_server_config(config: Arc<ServerConfig>) -> Self {
        TlsConfig { server: config }
    }

    /// The rustls configuration served.
    ///
    /// ```
    /// # use recon_core::admission::SelfSignedCertificate;
    /// let tls = SelfSignedCertificate::generate(&["localhost"]).unwrap().tls_config().unwrap();
    /// assert!(tls.server_config().alpn_protocols.contains(&b"http/1.1".to_vec()));
    /// ```
    pub fn server_config(&self) -> Arc<ServerConfig> {
        Arc::clone(&self.server)
    }

    fn from_pem_of(
        cert_pem: &[u8],
        cert_from: PemSource,
        key_pem: &[u8],
        key_from: PemSource,
    ) -> Result<Self, TlsError> {
        let chain = CertificateDer::pem_slice_iter(cert_pem)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| pem_error(e, &cert_from))?;
        if chain.is_empty() {
            return Err(TlsError::NoCertificate { from: cert_from });
        }
        let key = PrivateKeyDer::from_pem_slice(key_pem).map_err(|e| match e {
            pem::Error::NoItemsFound => TlsError::NoPrivateKey {
                from: key_from.clone(),
            },
            other => pem_error(other, &key_from),
        })?;
        let rejected = |source: rustls::Error| match source {
            rustls::Error::InconsistentKeys(rustls::InconsistentKeys::KeyMismatch) => {
                TlsError::KeyMismatch {
                    cert: cert_from.clone(),
                    key: key_from.clone(),
                }
            }
            source => TlsError::Rejected {
                cert: cert_from.clone(),
                key: key_from.clone(),
                source,
            },
        };
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(rejected)?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(rejected)?;
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsConfig {
            server: Arc::new(config),
        })
    }
}

fn pem_error(error: pem::Error, from: &PemSource) -> TlsError {
    TlsError::Pem {
        from: from.clone(),
        message: error.to_string(),
    }
}

/// A self-signed certificate and its private key, as PEM: for tests, demos and local
/// clusters, where the webhook configuration's `caBundle` is this very certificate.
///
/// Names that parse as IP addresses (`127.0.0.1`, `::1`) are certified as IP addresses, the
/// others as DNS names; the first name is also the subject's common name. The key is ECDSA
/// P-256; the certificate is valid from 1975 to 4096 and is for server authentication.
///
/// ```
/// use recon_core::admission::SelfSignedCertificate;
///
/// let generated = SelfSignedCertificate::generate(&["127.0.0.1", "webhook.default.svc"]).unwrap();
/// assert!(generated.cert_pem().starts_with("-----BEGIN CERTIFICATE-----"));
/// assert!(generated.key_pem().starts_with("-----BEGIN PRIVATE KEY-----"));
/// let tls = generated.tls_config().unwrap();
/// # let _ = tls;
/// ```
#[derive(Clone)]
pub struct SelfSignedCertificate {
    cert_pem: String,
    key_pem: String,
}

/// The files [`SelfSignedCertificate::write_to`] wrote.
///
/// ```
/// # use recon_core::admission::SelfSignedCertificate;
/// # let dir = std::env::temp_dir().join(format!("recon-doc-files-{}", std::process::id()));
/// let files = SelfSignedCertificate::generate(&["localhost"]).unwrap().write_to(&dir).unwrap();
/// assert!(files.cert.ends_with("tls.crt") && files.key.ends_with("tls.key"));
/// # std::fs::remove_dir_all(&dir).unwrap();
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CertificateFiles {
    /// The certificate (`tls.crt`).
    pub cert: PathBuf,
    /// The private key (`tls.key`).
    pub key: PathBuf,
}

impl SelfSignedCertificate {
    /// Generates a key and a certificate for `subject_alt_names`.
    ///
    /// ```
    /// use recon_core::admission::{SelfSignedCertificate, TlsError};
    ///
    /// assert!(SelfSignedCertificate::generate(&["127.0.0.1", "localhost"]).is_ok());
    /// assert!(matches!(
    ///     SelfSignedCertificate::generate(&[]),
    ///     Err(TlsError::NoSubjectAltName)
    /// ));
    /// ```
    pub fn generate(subject_alt_names: &[&str]) -> Result<Self, TlsError> {
        let Some(first) = subject_alt_names.first() else {
            return Err(TlsError::NoSubjectAltName);
        };
        let generate_error = |e: rcgen::Error| TlsError::Generate {
            message: e.to_string(),
        };
        let mut params = CertificateParams::default();
        params.subject_alt_names = subject_alt_names
            .iter()
            .map(|name| match name.parse::<IpAddr>() {
                Ok(ip) => Ok(SanType::IpAddress(ip)),
                Err(_) => (*name)
                    .to_owned()
                    .try_into()
                    .map(SanType::DnsName)
                    .map_err(|e| TlsError::Generate {
                        message: format!("{name:?} is not a valid DNS name: {e}"),
                    }),
            })
            .collect::<Result<_, _>>()?;
        let mut subject = DistinguishedName::new();
        subject.push(DnType::CommonName, *first);
        params.distinguished_name = subject;
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let key = KeyPair::generate().map_err(generate_error)?;
        let cert = params.self_signed(&key).map_err(generate_error)?;
        Ok(SelfSignedCertificate {
            cert_pem: cert.pem(),
            key_pem: key.serialize_pem(),
        })
    }

    /// The certificate, as PEM: what a client trusts (the `caBundle` of a webhook
    /// configuration, base64-encoded once more).
    ///
    /// ```
    /// # use recon_core::admission::SelfSignedCertificate;
    /// let generated = SelfSignedCertificate::generate(&["localhost"]).unwrap();
    /// assert!(generated.cert_pem().trim_end().ends_with("-----END CERTIFICATE-----"));
    /// ```
    pub fn cert_pem(&self) -> &str {
        &self.cert_pem
    }

    /// The private key, as PKCS#8 PEM.
    ///
    /// ```
    /// # use recon_core::admission::SelfSignedCertificate;
    /// let generated = SelfSignedCertificate::generate(&["localhost"]).unwrap();
    /// assert!(generated.key_pem().trim_end().ends_with("-----END PRIVATE KEY-----"));
    /// ```
    pub fn key_pem(&self) -> &str {
        &self.key_pem
    }

    /// The configuration to serve this certificate with.
    ///
    /// ```
    /// # use recon_core::admission::SelfSignedCertificate;
    /// let tls = SelfSignedCertificate::generate(&["localhost"]).unwrap().tls_config().unwrap();
    /// # let _ = tls;
    /// ```
    pub fn tls_config(&self) -> Result<TlsConfig, TlsError> {
        TlsConfig::from_pem(&self.cert_pem, &self.key_pem)
    }

    /// Writes the certificate to `dir/tls.crt` and the key to `dir/tls.key` (readable by the
    /// owner only, on Unix), creating `dir` if needed and replacing files already there; for
    /// [`TlsConfig::from_pem_files`].
    ///
    /// ```
    /// use recon_core::admission::{SelfSignedCertificate, TlsConfig};
    ///
    /// let dir = std::env::temp_dir().join(format!("recon-doc-write-{}", std::process::id()));
    /// let files = SelfSignedCertificate::generate(&["localhost"]).unwrap().write_to(&dir).unwrap();
    /// let tls = TlsConfig::from_pem_files(&files.cert, &files.key).unwrap();
    /// # let _ = tls;
    /// # std::fs::remove_dir_all(&dir).unwrap();
    /// ```
    pub fn write_to(&self, dir: impl AsRef<Path>) -> Result<CertificateFiles, TlsError> {
        let dir = dir.as_ref();
        fs::create_dir_all(dir).map_err(|source| TlsError::Write {
            path: dir.to_owned(),
            source,
        })?;
        let files = CertificateFiles {
            cert: dir.join(TLS_CERT_FILE),
            key: dir.join(TLS_KEY_FILE),
        };
        write_file(&files.cert, self.cert_pem.as_bytes(), false)?;
        write_file(&files.key, self.key_pem.as_bytes(), true)?;
        Ok(files)
    }
}

/// Writes `contents` to `path`, readable by its owner only if `private` (on Unix).
fn write_file(path: &Path, contents: &[u8], private: bool) -> Result<(), TlsError> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    if private {
        use std::os::unix::fs::OpenOptionsExt as _;
        options.mode(0o600);
    }
    #[cfg(not(unix))]
    let _ = private;
    options
        .open(path)
        .and_then(|mut file| file.write_all(contents))
        .map_err(|source| TlsError::Write {
            path: path.to_owned(),
            source,
        })
}

impl fmt::Debug for SelfSignedCertificate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelfSignedCertificate")
            .field("cert_pem", &self.cert_pem)
            .field("key_pem", &"<redacted>")
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;

    fn generated() -> SelfSignedCertificate {
        SelfSignedCertificate::generate(&["127.0.0.1", "webhook.default.svc"]).unwrap()
    }

    /// A fresh directory under the system's temporary directory.
    fn scratch_dir(name: &str) -> PathBuf {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        std::env::temp_dir().join(format!("recon-tls-{name}-{}-{n}", std::process::id()))
    }

    fn contains(haystack: &[u8], needle: &[u8]) -> bool {
        haystack.windows(needle.len()).any(|w| w == needle)
    }

    #[test]
    fn a_generated_certificate_serves() {
        let cert = generated();
        let tls = TlsConfig::from_pem(cert.cert_pem(), cert.key_pem()).unwrap();
        assert_eq!(tls.server_config().alpn_protocols, [b"http/1.1".to_vec()]);
    }

    #[test]
    fn ip_names_become_ip_sans_and_others_dns_sans() {
        let cert = generated();
        let der = CertificateDer::from_pem_slice(cert.cert_pem().as_bytes()).unwrap();
        // GeneralName iPAddress is [7] IMPLICIT OCTET STRING; dNSName is [2] IMPLICIT IA5String.
        assert!(
            contains(&der, &[0x87, 4, 127, 0, 0, 1]),
            "no IP SAN 127.0.0.1"
        );
        let dns = b"webhook.default.svc";
        let mut tagged = vec![0x82, u8::try_from(dns.len()).unwrap()];
        tagged.extend_from_slice(dns);
        assert!(contains(&der, &tagged), "no DNS SAN webhook.default.svc");
        let mut ip_as_dns = vec![0x82, 9];
        ip_as_dns.extend_from_slice(b"127.0.0.1");
        assert!(
            !contains(&der, &ip_as_dns),
            "127.0.0.1 certified as a DNS name"
        );
    }

    #[test]
    fn ipv6_names_are_ip_sans() {
        let cert = SelfSignedCertificate::generate(&["::1"]).unwrap();
        let der = CertificateDer::from_pem_slice(cert.cert_pem().as_bytes()).unwrap();
        let mut loopback = vec![0x87, 16];
        loopback.extend_from_slice(&[0; 15]);
        loopback.push(1);
        assert!(contains(&der, &loopback));
    }

    #[test]
    fn no_names_or_an_invalid_name_are_refused() {
        assert!(matches!(
            SelfSignedCertificate::generate(&[]),
            Err(TlsError::NoSubjectAltName)
        ));
        let err = SelfSignedCertificate::generate(&["bücher.example"]).unwrap_err();
        assert!(matches!(err, TlsError::Generate { .. }), "{err}");
        assert!(err.to_string().contains("\"bücher.example\""), "{err}");
    }

    #[test]
    fn a_certificate_file_without_a_certificate_is_named() {
        let cert = generated();
        let err = TlsConfig::from_pem("just some text\n", cert.key_pem()).unwrap_err();
        assert!(matches!(
            err,
            TlsError::NoCertificate {
                from: PemSource::CertificatePem
            }
        ));
        // A key where the chain should be is no certificate either.
        let err = TlsConfig::from_pem(cert.key_pem(), cert.key_pem()).unwrap_err();
        assert!(matches!(err, TlsError::NoCertificate { .. }), "{err}");
    }

    #[test]
    fn a_key_file_without_a_key_is_named() {
        let cert = generated();
        let err = TlsConfig::from_pem(cert.cert_pem(), cert.cert_pem()).unwrap_err();
        assert!(
            matches!(
                err,
                TlsError::NoPrivateKey {
                    from: PemSource::KeyPem
                }
            ),
            "{err}"
        );
        assert!(
            err.to_string()
                .starts_with("no private key in the private key PEM"),
            "{err}"
        );
    }

    #[test]
    fn malformed_pem_is_a_pem_error() {
        let cert = generated();
        let truncated = cert
            .cert_pem()
            .lines()
            .take(3)
            .collect::<Vec<_>>()
            .join("\n");
        let err = TlsConfig::from_pem(truncated, cert.key_pem()).unwrap_err();
        assert!(
            matches!(
                &err,
                TlsError::Pem {
                    from: PemSource::CertificatePem,
                    ..
                }
            ),
            "{err}"
        );
    }

    #[test]
    fn a_key_of_another_certificate_is_a_mismatch() {
        let ours = generated();
        let theirs = generated();
        let err = TlsConfig::from_pem(ours.cert_pem(), theirs.key_pem()).unwrap_err();
        assert!(matches!(err, TlsError::KeyMismatch { .. }), "{err}");
        assert_eq!(
            err.to_string(),
            "the private key in the private key PEM does not match the certificate in the \
             certificate chain PEM"
        );
    }

    #[test]
    fn written_files_read_back_and_errors_name_the_file() {
        let dir = scratch_dir("files");
        let cert = generated();
        let files = cert.write_to(&dir).unwrap();
        assert_eq!(files.cert, dir.join("tls.crt"));
        assert_eq!(files.key, dir.join("tls.key"));
        assert_eq!(fs::read_to_string(&files.cert).unwrap(), cert.cert_pem());
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = fs::metadata(&files.key).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "the key is readable by others: {mode:o}");
        }
        TlsConfig::from_pem_files(&files.cert, &files.key).unwrap();

        // The key file given as both: no certificate in it, and the error says which file.
        let err = TlsConfig::from_pem_files(&files.key, &files.key).unwrap_err();
        match &err {
            TlsError::NoCertificate {
                from: PemSource::File(path),
            } => assert_eq!(path, &files.key),
            other => panic!("expected NoCertificate, got {other:?}"),
        }
        assert!(err.to_string().contains("tls.key"), "{err}");

        let missing = dir.join("missing.key");
        let err = TlsConfig::from_pem_files(&files.cert, &missing).unwrap_err();
        match &err {
            TlsError::Read { path, source } => {
                assert_eq!(path, &missing);
                assert_eq!(source.kind(), io::ErrorKind::NotFound);
            }
            other => panic!("expected Read, got {other:?}"),
        }
        assert!(err.to_string().contains("missing.key"), "{err}");
        fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_key_stays_out_of_debug_output() {
        let cert = generated();
        let shown = format!("{cert:?}");
        assert!(shown.contains("<redacted>"));
        assert!(!shown.contains("PRIVATE KEY"));
    }
}
