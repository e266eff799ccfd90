//! The conversion webhook of the `morphs` CRD (`fixtures/conformance/crds/morphs.yaml`): v1alpha1's
//! `spec.legacy` is v1's `spec.shade`, everything else is copied. So that scenarios can reach
//! every way kube-apiserver handles a webhook that misbehaves, `spec.size` picks one:
//!
//! - 13: the review is answered `Failure` with the message `size 13 is unlucky`;
//! - 14: the review is answered with no objects;
//! - 15: the object comes back renamed (`metadata.name` + `-renamed`);
//! - 16: the object comes back in the version it was sent in;
//! - 17: the answer is an HTTP 500 with a plain-text body;
//! - 19: the answer is a 200 whose body is not JSON;
//! - 20: the answer is a review for another request (its `uid` is `wrong`);
//! - 21, 22: the object comes back with a label whose key (21) or value (22) is invalid;
//! - 23: the object comes back with an annotation whose key is invalid;
//! - 24: the object comes back with a label whose value is a number;
//! - 25: the object comes back with a list for `metadata`;
//! - 26: the answer is an HTTP 403 with a `Status` body;
//! - 27: the answer is an HTTP 404 with a plain-text body;
//! - 28: the answer is a 200 whose body is not even YAML.
//!
//! At record time the recorder serves it over HTTPS on 127.0.0.1 with a self-signed
//! certificate, and writes its URL and CA into the CRD it installs.

use std::net::SocketAddr;
use std::sync::{Arc, OnceLock};

use base64::Engine as _;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::{Value, json};

/// How the webhook answers one review: the HTTP status and the body.
pub fn answer(review: &Value) -> (u16, Value) {
    let request = &review["request"];
    let desired = request["desiredAPIVersion"].as_str().unwrap_or_default();
    let uid = request["uid"].clone();
    let objects = request["objects"].as_array().cloned().unwrap_or_default();
    let size = |o: &Value| o["spec"]["size"].as_i64().unwrap_or_default();
    let respond = |result: Value, converted: Vec<Value>| {
        json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "ConversionReview",
            "response": {"uid": uid, "result": result, "convertedObjects": converted}})
    };
    if objects.iter().any(|o| size(o) == 17) {
        return (500, Value::String("the webhook broke".to_owned()));
    }
    if objects.iter().any(|o| size(o) == 19) {
        return (200, Value::String("this is not JSON".to_owned()));
    }
    if objects.iter().any(|o| size(o) == 26) {
        let status = json!({"apiVersion": "v1", "kind": "Status", "status": "Failure",
            "message": "not for you", "reason": "Forbidden", "code": 403});
        return (403, status);
    }
    if objects.iter().any(|o| size(o) == 27) {
        return (404, Value::String("no such hook".to_owned()));
    }
    if objects.iter().any(|o| size(o) == 28) {
        return (200, Value::String("{{ not: [yaml".to_owned()));
    }
    if objects.iter().any(|o| size(o) == 20) {
        let mut answer = respond(json!({"status": "Success"}), objects.clone());
        answer["response"]["uid"] = Value::String("wrong".to_owned());
        return (200, answer);
    }
    if objects.iter().any(|o| size(o) == 13) {
        let failure = json!({"status": "Failure", "message": "size 13 is unlucky"});
        return (200, respond(failure, Vec::new()));
    }
    if objects.iter().any(|o| size(o) == 14) {
        return (200, respond(json!({"status": "Success"}), Vec::new()));
    }
    let converted = objects
        .into_iter()
        .map(|mut object| {
            match size(&object) {
                15 => {
                    let name = object["metadata"]["name"].as_str().unwrap_or_default();
                    object["metadata"]["name"] = Value::String(format!("{name}-renamed"));
                }
                16 => return object,
                21 => object["metadata"]["labels"] = json!({"bad key!": "v"}),
                22 => object["metadata"]["labels"] = json!({"k": "-v-"}),
                23 => object["metadata"]["annotations"] = json!({"bad key!": "v"}),
                24 => object["metadata"]["labels"] = json!({"n": 1}),
                25 => object["metadata"] = json!([]),
                _ => {}
            }
            let from = object["apiVersion"].as_str().unwrap_or_default().to_owned();
            if let Some(spec) = object.get_mut("spec").and_then(Value::as_object_mut) {
                let (old, new) = ("legacy", "shade");
                let (take, put) = if desired.ends_with("/v1") && from.ends_with("/v1alpha1") {
                    (old, new)
                } else {
                    (new, old)
                };
                if let Some(value) = spec.remove(take) {
                    spec.insert(put.to_owned(), value);
                }
            }
            object["apiVersion"] = Value::String(desired.to_owned());
            object
        })
        .collect();
    (200, respond(json!({"status": "Success"}), converted))
}

/// [`answer`] as the in-memory server calls it: the review's JSON in, the HTTP answer out.
pub fn in_process(review: &[u8]) -> http::Response<Vec<u8>> {
    let review: Value = serde_json::from_slice(review).unwrap_or_default();
    let (code, answer) = answer(&review);
    http_answer(code, answer)
}

/// The HTTP answer the webhook sends, JSON whatever the body.
fn http_answer(code: u16, answer: Value) -> http::Response<Vec<u8>> {
    let body = match answer {
        Value::String(text) => text.into_bytes(),
        other => other.to_string().into_bytes(),
    };
    let mut response = http::Response::new(body);
    *response.status_mut() = http::StatusCode::from_u16(code).unwrap_or(http::StatusCode::OK);
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    response
}

/// The webhook served for the recorder: its URL and the PEM of its CA.
pub struct Served {
    pub url: String,
    pub ca_pem: String,
}

/// Starts the webhook (once per test process) on a thread of its own.
pub fn serve() -> &'static Served {
    static SERVED: OnceLock<Served> = OnceLock::new();
    SERVED.get_or_init(|| {
        let key = rcgen::KeyPair::generate().expect("a key pair");
        let params = rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned()])
            .expect("certificate parameters");
        let cert = params.self_signed(&key).expect("a self-signed certificate");
        let ca_pem = cert.pem();
        let chain = vec![cert.der().clone()];
        let private =
            rustls::pki_types::PrivateKeyDer::try_from(key.serialize_der()).expect("a private key");
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .expect("TLS versions")
            .with_no_client_auth()
            .with_single_cert(chain, private)
            .expect("a TLS configuration");
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
        let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a port for the webhook");
        let addr: SocketAddr = listener.local_addr().expect("the webhook's address");
        listener
            .set_nonblocking(true)
            .expect("a non-blocking listener");
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .expect("a runtime");
            runtime.block_on(async move {
                let listener =
                    tokio::net::TcpListener::from_std(listener).expect("a Tokio listener");
                loop {
                    let Ok((tcp, _)) = listener.accept().await else {
                        continue;
                    };
                    let acceptor = acceptor.clone();
                    tokio::spawn(async move {
                        let Ok(tls) = acceptor.accept(tcp).await else {
                            return;
                        };
                        let service = service_fn(
                            |request: http::Request<hyper::body::Incoming>| async move {
                                let body = request
                                    .into_body()
                                    .collect()
                                    .await
                                    .map(|b| b.to_bytes())
                                    .unwrap_or_default();
                                let response = in_process(&body).map(|b| Full::new(Bytes::from(b)));
                                Ok::<_, std::convert::Infallible>(response)
                            },
                        );
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(tls), service)
                            .await;
                    });
                }
            });
        });
        Served {
            url: format!("https://{addr}/convert"),
            ca_pem,
        }
    })
}

/// `crd` pointing at the served webhook, if it converts by webhook.
pub fn point_at_the_webhook(crd: &mut Value) {
    if crd["spec"]["conversion"]["strategy"] != "Webhook" {
        return;
    }
    let served = serve();
    let bundle = base64::engine::general_purpose::STANDARD.encode(&served.ca_pem);
    crd["spec"]["conversion"]["webhook"]["clientConfig"] =
        json!({"url": served.url, "caBundle": bundle});
}
