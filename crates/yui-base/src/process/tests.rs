//! The process runner's tests: the environment, the descriptors and the start failures a
//! child sees, on real processes.

/// A descriptor the app holds open without close-on-exec (as WebKit does for its own
/// children) does not reach a child of the runner.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn a_child_keeps_no_descriptor_but_its_stdio() {
    let mut fds = [0; 2];
    assert_eq!(
        unsafe { libc::pipe(fds.as_mut_ptr()) },
        0,
        "an inheritable pipe"
    );
    let mut cmd = Command::new("sh");
    cmd.arg("-c")
        .arg(format!(
            "test -e /proc/self/fd/{} && echo kept || echo closed",
            fds[1]
        ))
        .stdout(Stdio::piped());
    let (child, _group) = spawn(&mut cmd).await.unwrap();
    let out = child.wait_with_output().await.unwrap();
    unsafe {
        libc::close(fds[0]);
        libc::close(fds[1]);
    }
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "closed");
}

use super::*;

/// What the app set for itself (its WebKit settings) reaches no child, unless the caller set
/// it for that child; the rest of the environment does.
#[tokio::test]
async fn children_do_not_inherit_what_the_app_kept_to_itself() {
    std::env::set_var("YUI_TEST_KEPT", "1");
    std::env::set_var("YUI_TEST_SHARED", "1");
    keep_env_to_self(vec!["YUI_TEST_KEPT".into()]);
    let spec = || RunSpec {
        stdin: None,
        max_capture: 1024,
        deadline: Instant::now() + Duration::from_secs(10),
        grace: DEFAULT_GRACE,
        drain: Duration::from_secs(1),
    };
    let script = "echo ${YUI_TEST_KEPT:-unset} ${YUI_TEST_SHARED:-unset}";
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script]);
    let out = run(cmd, spec(), &CancellationToken::new()).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "unset 1");
    let mut cmd = Command::new("sh");
    cmd.args(["-c", script]).env("YUI_TEST_KEPT", "2");
    let out = run(cmd, spec(), &CancellationToken::new()).await.unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2 1");
}

/// Each way a start fails, in plain words without the OS's code; the code stays in the source.
#[tokio::test]
async fn start_failures_are_plain_words_and_keep_the_os_error() {
    let dir = tempfile::tempdir().unwrap();
    let plain = |mut cmd: Command| async move {
        let e = start(&mut cmd).await.expect_err("a failure");
        assert!(e.os_error().raw_os_error().is_some(), "{e:?}");
        e.to_string()
    };
    let missing = Command::new("/nonexistent/bin/mcp-nothing");
    assert_eq!(
        plain(missing).await,
        "the command /nonexistent/bin/mcp-nothing was not found"
    );
    let bare = Command::new("yui-no-such-program-46");
    assert_eq!(
        plain(bare).await,
        "the command yui-no-such-program-46 was not found"
    );
    let file = dir.path().join("not-x");
    std::fs::write(&file, "#!/bin/sh\n").unwrap();
    let shown = file.display().to_string();
    assert_eq!(
        plain(Command::new(&file)).await,
        format!("the command {shown} is not executable")
    );
    let script = dir.path().join("no-interp");
    std::fs::write(&script, "#!/nonexistent/interp\n").unwrap();
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    assert_eq!(
        plain(Command::new(&script)).await,
        format!(
            "the command {} names an interpreter on its first line that was not found",
            script.display()
        )
    );
    let mut cmd = Command::new("sh");
    cmd.current_dir("/nonexistent/dir");
    assert_eq!(
        plain(cmd).await,
        "the working directory /nonexistent/dir does not exist"
    );
    let mut cmd = Command::new("sh");
    cmd.current_dir(&file);
    assert_eq!(
        plain(cmd).await,
        format!("the working directory {shown} is not a directory")
    );
}
