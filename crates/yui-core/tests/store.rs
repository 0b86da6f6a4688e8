//! Store layer on real SQLite files: migrations, defaults, round trips, refusal of newer and
//! damaged files, and the API key never landing in the database.

use chrono::{TimeZone, Utc};
use rusqlite::Connection;
use serde_json::json;
use std::path::Path;
use yui_core::backend::{self, BackendChange, KeyStorage, Secrets, Transport};
use yui_core::paths::Paths;
use yui_core::presets::{self, PresetUpdate};
use yui_core::store::migrations::{self, SCHEMA_VERSION};
use yui_core::transcript::{self, Role};
use yui_core::{settings, ErrorCode, Store};

fn temp() -> (tempfile::TempDir, Paths) {
    let dir = tempfile::tempdir().expect("tempdir");
    let paths = Paths::resolve(Some(dir.path().to_path_buf()));
    (dir, paths)
}

fn open(paths: &Paths) -> Store {
    Store::open(paths.db_path()).expect("open store")
}

fn user_version(path: &Path) -> i64 {
    let c = Connection::open(path).unwrap();
    c.query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap()
}

fn tables(path: &Path) -> Vec<String> {
    let c = Connection::open(path).unwrap();
    let mut s = c
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name")
        .unwrap();
    let names = s.query_map([], |r| r.get(0)).unwrap();
    names.map(Result::unwrap).collect()
}

#[test]
fn migrates_an_empty_file_to_the_current_version() {
    let (_d, paths) = temp();
    let store = open(&paths);
    assert_eq!(store.integrity_check().unwrap(), "ok");
    drop(store);
    assert_eq!(user_version(&paths.db_path()), SCHEMA_VERSION);
    let t = tables(&paths.db_path());
    for want in ["presets", "settings", "transcript"] {
        assert!(t.iter().any(|n| n == want), "missing table {want} in {t:?}");
    }
}

#[test]
fn migrates_from_each_older_version() {
    for from in 0..SCHEMA_VERSION {
        let (_d, paths) = temp();
        {
            std::fs::create_dir_all(&paths.data_dir).unwrap();
            let mut c = Connection::open(paths.db_path()).unwrap();
            migrations::migrate_to(&mut c, from).unwrap();
            assert_eq!(
                c.query_row("PRAGMA user_version", [], |r| r.get::<_, i64>(0))
                    .unwrap(),
                from
            );
            if from >= 1 {
                // Data written by the older version survives the upgrade.
                c.execute("UPDATE presets SET persona = 'kept' WHERE id = 'kai'", [])
                    .unwrap();
            }
        }
        let store = open(&paths);
        assert_eq!(
            user_version(&paths.db_path()),
            SCHEMA_VERSION,
            "from {from}"
        );
        let kai = presets::get(&store, "kai").unwrap();
        if from >= 1 {
            assert_eq!(kai.persona, "kept", "from {from}");
        }
        // Every table of the current version is usable.
        settings::set(&store, settings::SCREEN, &json!({"enabled": true})).unwrap();
        transcript::append(&store, "kai", Role::User, "hi", None, Utc::now()).unwrap();
        assert_eq!(store.integrity_check().unwrap(), "ok");
    }
}

#[test]
fn reopening_is_idempotent() {
    let (_d, paths) = temp();
    let store = open(&paths);
    presets::add(&store, "Mio").unwrap();
    drop(store);
    let store = open(&paths);
    assert_eq!(presets::list(&store).unwrap().len(), 3);
}

#[test]
fn wal_mode_is_on() {
    let (_d, paths) = temp();
    let store = open(&paths);
    let mode: String = store
        .read(|c| Ok(c.query_row("PRAGMA journal_mode", [], |r| r.get(0))?))
        .unwrap();
    assert_eq!(mode, "wal");
}

#[test]
fn defaults_two_open_presets_and_switches() {
    let (_d, paths) = temp();
    let store = open(&paths);
    let all = presets::list(&store).unwrap();
    let ids: Vec<&str> = all.iter().map(|p| p.id.as_str()).collect();
    assert_eq!(ids, ["yui", "kai"]);
    assert!(all.iter().all(|p| p.is_open));
    assert!(all[0].is_main && !all[1].is_main);
    assert_eq!(all[0].name, "Yui");
    assert_eq!(all[0].avatar, json!({"kind": "builtin", "palette": "rose"}));
    assert_eq!(presets::main_preset(&store).unwrap().id, "yui");
    assert!(!settings::switch_on(&store, settings::BROWSER).unwrap());
    assert!(settings::switch_on(&store, settings::RELATIONS).unwrap());
    assert!(!settings::switch_on(&store, settings::SCREEN).unwrap());
    assert_eq!(
        settings::get(&store, settings::BROWSER).unwrap(),
        json!({"enabled": false})
    );
    assert_eq!(
        settings::get(&store, settings::BACKEND).unwrap()["base_url"],
        "http://127.0.0.1:11434/v1"
    );
}

#[test]
fn settings_round_trip_and_list() {
    let (_d, paths) = temp();
    let store = open(&paths);
    settings::set(&store, settings::BROWSER, &json!({"enabled": true})).unwrap();
    // An unknown key is refused and stores nothing.
    let err = settings::set(&store, "my.custom", &json!([1, "two"])).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert!(
        err.message.starts_with("unknown setting key \"my.custom\""),
        "{}",
        err.message
    );
    drop(store);
    let store = open(&paths);
    assert!(settings::switch_on(&store, settings::BROWSER).unwrap());
    assert_eq!(settings::get(&store, "my.custom").unwrap(), json!(null));
    assert_eq!(settings::get(&store, "never.set").unwrap(), json!(null));
    let all = settings::list(&store).unwrap();
    assert_eq!(all["yui.browser"], json!({"enabled": true}));
    assert_eq!(all["yui.relations"], json!({"enabled": true}));
    assert_eq!(all["yui.screen"], json!({"enabled": false}));
    assert_eq!(all["yui.backend"]["transport"], "chat_completions");
    assert!(all.get("my.custom").is_none());
    assert_eq!(all[settings::ENABLED_CLIENT_TOOLS], json!({}));
    let err = settings::set(&store, settings::SCREEN, &json!({"enabled": "yes"})).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert_eq!(err.message, "yui.screen must be {\"enabled\": true|false}");
    let err = settings::set(
        &store,
        settings::BACKEND,
        &json!({"base_url": "nope", "model": "m"}),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
}

#[test]
fn switches_read_and_flip_only_the_three_switches() {
    let (_d, paths) = temp();
    let store = open(&paths);
    let off = settings::Switches {
        browser: false,
        relations: true,
        screen: false,
    };
    assert_eq!(settings::switches(&store).unwrap(), off);
    let now = settings::set_switch(&store, settings::BROWSER, true).unwrap();
    assert_eq!(
        now,
        settings::Switches {
            browser: true,
            ..off
        }
    );
    assert!(settings::switch_on(&store, settings::BROWSER).unwrap());
    let err = settings::set_switch(&store, settings::BACKEND, true).unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    assert_eq!(err.message, "\"yui.backend\" is not a switch");
    assert_eq!(
        settings::get(&store, settings::BACKEND).unwrap()["transport"],
        "chat_completions",
        "a refused key is left as it was"
    );
}

#[test]
fn preset_add_open_close_position_update_round_trip() {
    let (_d, paths) = temp();
    let store = open(&paths);
    let mio = presets::add(&store, "  Mio Chan! ").unwrap();
    assert_eq!(mio.id, "mio-chan");
    assert_eq!(mio.name, "Mio Chan!");
    assert!(!mio.is_open && !mio.is_main);
    assert_eq!(mio.sort, 2);
    // Same name again: the id is made unique.
    assert_eq!(presets::add(&store, "Mio chan").unwrap().id, "mio-chan-2");
    assert_eq!(presets::add(&store, "ユイ").unwrap().id, "preset");
    assert_eq!(presets::add(&store, "Yui!").unwrap().id, "yui-2");
    // A name already taken (ignoring case) is refused.
    let err = presets::add(&store, "MIO CHAN!").unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    let err = presets::add(&store, "   ").unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);

    assert!(presets::open(&store, "mio-chan").unwrap().is_open);
    presets::set_position(&store, "mio-chan", 120, -40).unwrap();
    let change = PresetUpdate {
        persona: Some("You are Mio.".into()),
        voice: Some(json!({"voice_type": "female1"})),
        ..Default::default()
    };
    presets::update(&store, "mio-chan", &change).unwrap();
    drop(store);

    let store = open(&paths);
    let mio = presets::get(&store, "mio-chan").unwrap();
    assert!(mio.is_open);
    assert_eq!((mio.pos_x, mio.pos_y), (Some(120), Some(-40)));
    assert_eq!(mio.persona, "You are Mio.");
    assert_eq!(mio.voice, json!({"voice_type": "female1"}));
    assert!(!presets::close(&store, "mio-chan").unwrap().is_open);
    assert!(!presets::get(&store, "mio-chan").unwrap().is_open);

    let err = presets::close(&store, "yui").unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidInput);
    let err = presets::open(&store, "nobody").unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
    let err = presets::set_position(&store, "nobody", 1, 1).unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);

    let kai = presets::set_main(&store, "kai").unwrap();
    assert!(kai.is_main && kai.is_open);
    assert!(!presets::get(&store, "yui").unwrap().is_main);
    assert_eq!(presets::main_preset(&store).unwrap().id, "kai");
}

#[test]
fn an_opened_preset_takes_the_next_window_slot() {
    let (_d, paths) = temp();
    let store = open(&paths);
    // Yui (main, slot 0) and Kai (slot 1) are open by default.
    presets::add(&store, "Mio").unwrap();
    let (mio, slot) = presets::open_with_slot(&store, "mio").unwrap();
    assert!(mio.is_open);
    assert_eq!(slot, 2);
    presets::close(&store, "kai").unwrap();
    assert_eq!(presets::open_with_slot(&store, "kai").unwrap().1, 2);
    let err = presets::open_with_slot(&store, "nobody").unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
}

#[test]
fn transcript_append_and_recent_in_order() {
    let (_d, paths) = temp();
    let store = open(&paths);
    let t0 = Utc.with_ymd_and_hms(2026, 3, 29, 0, 59, 58).unwrap();
    for i in 0..5 {
        let role = if i % 2 == 0 {
            Role::User
        } else {
            Role::Assistant
        };
        transcript::append(
            &store,
            "yui",
            role,
            &format!("line {i}"),
            Some("turn-1"),
            t0 + chrono::Duration::seconds(i),
        )
        .unwrap();
    }
    transcript::append(&store, "kai", Role::User, "other", None, t0).unwrap();
    drop(store);
    let store = open(&paths);
    let last3 = transcript::recent(&store, "yui", 3).unwrap();
    let texts: Vec<&str> = last3.iter().map(|e| e.text.as_str()).collect();
    assert_eq!(texts, ["line 2", "line 3", "line 4"]);
    assert_eq!(last3[0].role, Role::User);
    assert_eq!(last3[1].role, Role::Assistant);
    assert_eq!(last3[2].at, t0 + chrono::Duration::seconds(4));
    assert_eq!(last3[0].turn_id.as_deref(), Some("turn-1"));
    assert_eq!(transcript::recent(&store, "yui", 100).unwrap().len(), 5);
    assert_eq!(
        transcript::recent(&store, "kai", 100).unwrap()[0].turn_id,
        None
    );
    assert!(transcript::recent(&store, "nobody", 10).unwrap().is_empty());
    let err = transcript::append(&store, "nobody", Role::User, "x", None, t0).unwrap_err();
    assert_eq!(err.code, ErrorCode::NotFound);
}

#[test]
fn transcript_append_is_committed_at_once() {
    let (_d, paths) = temp();
    let store = open(&paths);
    transcript::append(&store, "yui", Role::User, "remember me", None, Utc::now()).unwrap();
    // A separate connection (another process, as far as SQLite knows) sees it.
    let c = Connection::open(paths.db_path()).unwrap();
    let n: i64 = c
        .query_row(
            "SELECT COUNT(*) FROM transcript WHERE text = 'remember me'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(n, 1);
}

/// Whether the main database file alone (no -wal beside it) holds transcript line `text`: true
/// once a checkpoint has copied the commit back from the WAL.
fn main_file_has(db: &Path, text: &str) -> bool {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.sqlite3");
    std::fs::copy(db, &copy).unwrap();
    let c = Connection::open(&copy).unwrap();
    // Before the first checkpoint even the schema lives only in the WAL: "no such table".
    c.query_row(
        "SELECT COUNT(*) FROM transcript WHERE text = ?1",
        [text],
        |r| r.get::<_, i64>(0),
    )
    .is_ok_and(|n| n == 1)
}

#[test]
fn commits_are_checkpointed_into_the_main_file_in_the_background() {
    let (_d, paths) = temp();
    let store = open(&paths);
    transcript::append(&store, "yui", Role::User, "checkpoint me", None, Utc::now()).unwrap();
    // Automatic checkpoints are off, so only the store's checkpointer thread can copy it back
    // while the store stays open.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !main_file_has(&paths.db_path(), "checkpoint me") {
        assert!(
            std::time::Instant::now() < deadline,
            "the commit never reached the main file while the store was open"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(store);
}

#[test]
fn closing_the_store_right_after_a_commit_keeps_it_and_removes_the_wal() {
    let (_d, paths) = temp();
    let db = paths.db_path();
    let store = open(&paths);
    let clone = store.clone();
    transcript::append(&store, "yui", Role::User, "last words", None, Utc::now()).unwrap();
    drop(store);
    // A clone keeps the store open; the last handle closes it.
    assert!(Path::new(&format!("{}-wal", db.display())).exists());
    drop(clone);
    assert!(
        !Path::new(&format!("{}-wal", db.display())).exists(),
        "the writer must close last and remove the -wal file"
    );
    assert!(main_file_has(&db, "last words"));
}

#[test]
fn newer_database_is_refused_and_left_untouched() {
    // Both journal modes: an older YUI never switched it, a newer one left it in WAL.
    for mode in ["delete", "wal"] {
        let (_d, paths) = temp();
        std::fs::create_dir_all(&paths.data_dir).unwrap();
        {
            let c = Connection::open(paths.db_path()).unwrap();
            let _: String = c
                .query_row(&format!("PRAGMA journal_mode={mode}"), [], |r| r.get(0))
                .unwrap();
            c.execute_batch("CREATE TABLE future (x); INSERT INTO future VALUES (1);")
                .unwrap();
            c.pragma_update(None, "user_version", SCHEMA_VERSION + 1)
                .unwrap();
        }
        let before = std::fs::read(paths.db_path()).unwrap();
        let err = Store::open(paths.db_path()).unwrap_err();
        assert_eq!(err.code, ErrorCode::StoreTooNew, "{mode}");
        assert_eq!(
            err.message,
            format!(
                "this database was written by a newer YUI (schema version {}, this build knows {SCHEMA_VERSION}); update YUI or use another --data-dir",
                SCHEMA_VERSION + 1
            )
        );
        assert!(
            std::fs::read(paths.db_path()).unwrap() == before,
            "the refused file was changed ({mode})"
        );
        assert_eq!(user_version(&paths.db_path()), SCHEMA_VERSION + 1);
    }
}

#[test]
fn garbage_file_is_reported_corrupt_and_left_byte_identical() {
    let (_d, paths) = temp();
    std::fs::create_dir_all(&paths.data_dir).unwrap();
    let garbage: Vec<u8> = (0..8192u32).map(|i| (i * 7919 % 251) as u8).collect();
    std::fs::write(paths.db_path(), &garbage).unwrap();
    let err = Store::open(paths.db_path()).unwrap_err();
    assert_eq!(err.code, ErrorCode::StoreCorrupt);
    assert!(
        err.message.contains("left untouched") && err.message.contains("yui.sqlite3"),
        "{}",
        err.message
    );
    assert!(
        std::fs::read(paths.db_path()).unwrap() == garbage,
        "the damaged file was changed"
    );
}

#[test]
fn damaged_header_is_reported_corrupt_and_left_byte_identical() {
    let (_d, paths) = temp();
    drop(open(&paths));
    // Checkpointed and closed: the main file holds everything. Break its header.
    let mut bytes = std::fs::read(paths.db_path()).unwrap();
    bytes[..16].copy_from_slice(b"NOT A DATABASE!\0");
    std::fs::write(paths.db_path(), &bytes).unwrap();
    let err = Store::open(paths.db_path()).unwrap_err();
    assert_eq!(err.code, ErrorCode::StoreCorrupt);
    assert!(
        std::fs::read(paths.db_path()).unwrap() == bytes,
        "the damaged file was changed"
    );
}

#[test]
fn backend_settings_round_trip() {
    let (_d, paths) = temp();
    let store = open(&paths);
    let cfg = backend::load(&store).unwrap();
    assert_eq!(cfg.base_url, "http://127.0.0.1:11434/v1");
    assert_eq!(cfg.transport, Transport::ChatCompletions);
    let change = BackendChange {
        base_url: Some("https://api.example.test/v1".into()),
        model: Some("gpt-test".into()),
        transport: Some(Transport::Push),
        push_url: Some(Some("ws://127.0.0.1:9000/push".into())),
        ..Default::default()
    };
    backend::update(&store, &change).unwrap();
    drop(store);
    let store = open(&paths);
    let cfg = backend::load(&store).unwrap();
    assert_eq!(cfg.model, "gpt-test");
    assert_eq!(cfg.transport, Transport::Push);
    assert_eq!(cfg.push_url.as_deref(), Some("ws://127.0.0.1:9000/push"));
    // Push without a push URL is refused and the stored value stays.
    let clear = BackendChange {
        push_url: Some(None),
        ..Default::default()
    };
    assert_eq!(
        backend::update(&store, &clear).unwrap_err().message,
        "the push transport needs a push_url"
    );
    assert_eq!(backend::load(&store).unwrap().transport, Transport::Push);
}

#[test]
fn api_key_never_lands_in_the_database_and_fallback_is_owner_only() {
    let (_d, paths) = temp();
    let store = open(&paths);
    let key = "sk-yui-test-7f3a9c0d1e2b4f6a8c0e";
    let secrets = Secrets::file_only(&paths);
    assert_eq!(secrets.storage(), KeyStorage::None);
    assert_eq!(secrets.set_api_key(key).unwrap(), KeyStorage::FileFallback);
    assert_eq!(secrets.api_key().unwrap().expose(), key);
    assert_eq!(secrets.storage(), KeyStorage::FileFallback);
    // Store other things too, then look for the key in every file of the data dir.
    backend::update(
        &store,
        &BackendChange {
            model: Some("m".into()),
            ..Default::default()
        },
    )
    .unwrap();
    drop(store);
    for entry in std::fs::read_dir(&paths.data_dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_file() {
            let bytes = std::fs::read(&path).unwrap();
            assert!(
                !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
                "the key is in {}",
                path.display()
            );
        }
    }
    let fallback = secrets.fallback_path();
    let text = std::fs::read_to_string(&fallback).unwrap();
    assert!(text.contains("file-fallback (no OS keyring)"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&fallback).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    // The view handed to the UI says only whether a key exists.
    let store = open(&paths);
    std::env::set_var(backend::KEYRING_ENV, "off");
    let view = serde_json::to_value(backend::view(&store, &paths).unwrap()).unwrap();
    assert_eq!(view["has_api_key"], true);
    assert_eq!(view["api_key_storage"], "file-fallback (no OS keyring)");
    assert!(!view.to_string().contains(key));
    assert_eq!(backend::api_key(&paths).as_deref(), Some(key));
    assert!(!format!("{:?}", secrets.api_key()).contains(key));
    secrets.clear().unwrap();
    assert!(!fallback.exists());
    assert_eq!(secrets.storage(), KeyStorage::None);
}
