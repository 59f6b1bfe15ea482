//! `kill -9` under load loses nothing that was acknowledged: concurrent writers add plan steps
//! to a real `haico serve` (a child process), the server is killed with SIGKILL mid-load and
//! started again on the same database, and every step whose `POST` was answered `201` is
//! there. On both engines. (On SQLite, WAL with `synchronous=NORMAL` survives a killed process:
//! a commit is in the WAL file, which the operating system keeps; only a crash of the machine
//! or a power cut may lose the last commits before a checkpoint.)

use crate::common;

use std::{
    collections::BTreeSet,
    sync::{Arc, Mutex},
    time::{Duration, Instant},
};

use common::{TestDb, child::ChildServer};
use serde_json::json;

/// Concurrent writers.
const WRITERS: usize = 16;
/// Threads they share (two writers or more per thread, so writes also contend).
const THREADS: usize = 4;
/// Load before the kill: long enough for hundreds of writes, short enough for CI.
const LOAD_FOR: Duration = Duration::from_millis(2000);
/// Kill-and-restart rounds.
const ROUNDS: usize = 2;

/// One writer: adds steps `w{writer}-{n}` until a request fails (the server is gone); returns
/// the texts the server acknowledged.
async fn writer(base: String, writer: usize, round: usize, acked: Arc<Mutex<Vec<String>>>) {
    let http = reqwest::Client::builder()
        .timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let thread = format!("k9-{}", writer % THREADS);
    for n in 0.. {
        let text = format!("r{round}-w{writer}-{n}");
        let sent = http
            .post(format!("{base}/api/threads/{thread}/todos"))
            .json(&json!({ "text": text }))
            .send()
            .await;
        match sent {
            Ok(response) if response.status().as_u16() == 201 => {
                acked.lock().unwrap().push(text);
            }
            Ok(response) => panic!(
                "unexpected {} for {text}: {}",
                response.status(),
                response.text().await.unwrap_or_default()
            ),
            Err(_) => return,
        }
    }
}

async fn stored_steps(server: &ChildServer) -> BTreeSet<String> {
    let mut texts = BTreeSet::new();
    for t in 0..THREADS {
        let steps = server.get_json(&format!("/api/threads/k9-{t}/todos")).await;
        for step in steps.as_array().expect("a list of steps") {
            texts.insert(step["text"].as_str().unwrap().to_string());
        }
    }
    texts
}

backend_tests! {
    async fn acknowledged_writes_survive_kill_9(engine) {
        let tdb = TestDb::new(engine).await;
        let mut server = ChildServer::start(&tdb.url, &[]).await;
        for t in 0..THREADS {
            let created = server
                .http
                .post(server.url("/api/threads"))
                .json(&json!({ "id": format!("k9-{t}") }))
                .send()
                .await
                .unwrap();
            assert_eq!(created.status().as_u16(), 201);
        }
        let acked = Arc::new(Mutex::new(Vec::new()));
        for round in 0..ROUNDS {
            let before = acked.lock().unwrap().len();
            let tasks: Vec<_> = (0..WRITERS)
                .map(|w| tokio::spawn(writer(server.base.clone(), w, round, acked.clone())))
                .collect();
            tokio::time::sleep(LOAD_FOR).await;
            let killed_at = Instant::now();
            server.kill();
            for task in tasks {
                tokio::time::timeout(Duration::from_secs(15), task)
                    .await
                    .expect("writers stop once the server is gone")
                    .expect("writer did not panic");
            }
            let this_round = acked.lock().unwrap().len() - before;
            assert!(this_round >= 20, "[{engine:?}] only {this_round} writes before the kill");
            server.restart().await;
            let stored = stored_steps(&server).await;
            let missing: Vec<String> = acked
                .lock()
                .unwrap()
                .iter()
                .filter(|t| !stored.contains(*t))
                .cloned()
                .collect();
            assert!(
                missing.is_empty(),
                "[{engine:?}] round {round}: {} acknowledged writes are gone after kill -9: {:?}",
                missing.len(),
                &missing[..missing.len().min(10)]
            );
            eprintln!(
                "[{engine:?}] round {round}: {this_round} acknowledged writes, all there after \
                 kill -9 and a restart ({:?} from kill to healthy)",
                killed_at.elapsed()
            );
        }
        drop(server);
        tdb.cleanup().await;
    }
}
