//! A server's own temp dir, and a folder beside it that is provably outside every root of that
//! server: tests of path escapes need a place the sandbox must refuse, wherever the clone lives
//! (under /tmp too) and whatever `TMPDIR` is.
//!
//! The server always allows its temp dir, so a test cannot just pick a folder "somewhere else":
//! under `target/`, that is inside the temp dir when the clone is. Instead the server gets
//! `TMPDIR=<base>/tmp` and the outside folder is `<base>/outside`.

use std::path::{Path, PathBuf};

pub struct PrivateTmp {
    base: tempfile::TempDir,
}

impl PrivateTmp {
    pub fn new() -> PrivateTmp {
        let base = tempfile::Builder::new()
            .prefix("devtools-mcp-private-")
            .tempdir()
            .expect("private temp base");
        for folder in ["tmp", "outside"] {
            std::fs::create_dir(base.path().join(folder)).expect("private temp folder");
        }
        PrivateTmp { base }
    }

    /// The server's temp dir (pass [`PrivateTmp::env`] when starting it).
    pub fn tmp(&self) -> PathBuf {
        self.base.path().join("tmp")
    }

    /// A folder beside the server's temp dir: in none of its roots.
    pub fn outside(&self) -> PathBuf {
        self.base.path().join("outside")
    }

    /// The environment that makes [`PrivateTmp::tmp`] the server's temp dir.
    pub fn env(&self) -> Vec<(String, String)> {
        vec![(
            "TMPDIR".to_string(),
            self.tmp().to_string_lossy().into_owned(),
        )]
    }

    /// Panics unless [`PrivateTmp::outside`] is outside the server's temp dir and every other
    /// root given (the `--workspace` folders), compared as canonical paths.
    pub fn assert_outside(&self, workspaces: &[&Path]) {
        let outside = canonical(&self.outside());
        let roots = workspaces
            .iter()
            .map(|root| canonical(root))
            .chain([canonical(&self.tmp())]);
        for root in roots {
            assert!(
                !outside.starts_with(&root) && !root.starts_with(&outside),
                "the outside folder {} is not outside the root {}",
                outside.display(),
                root.display()
            );
        }
    }
}

fn canonical(path: &Path) -> PathBuf {
    path.canonicalize()
        .unwrap_or_else(|error| panic!("canonicalize {}: {error}", path.display()))
}
