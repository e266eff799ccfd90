//! The demo's versions part on the in-memory server: a Website written through v1alpha1,
//! reconciled as v1, read back through both.

use recon_demo::Target;
use recon_demo::versions::{self, Views};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_website_written_through_v1alpha1_is_reconciled_and_reads_back_through_both() {
    let views = versions::run(&Target::in_memory()).await.unwrap();
    assert_eq!(
        views,
        Views {
            v1_hosts: vec!["blog.example.com".into(), "www.blog.example.com".into()],
            v1alpha1: (
                "blog.example.com".into(),
                Some("www.blog.example.com".into())
            ),
            config_map: "blog.example.com\nwww.blog.example.com".into(),
        }
    );
}
