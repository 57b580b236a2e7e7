//! The package's README lists every error code the engine defines, so a new code cannot
//! ship without its line there.

use std::path::Path;

use specula_engine::ErrorCode;

#[test]
fn the_package_readme_names_every_error_code() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../web/README.md");
    let readme = std::fs::read_to_string(&path).expect("web/README.md");
    let missing: Vec<&str> = ErrorCode::ALL
        .iter()
        .map(|code| code.as_str())
        .filter(|name| !readme.contains(&format!("`{name}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "web/README.md does not name the error codes {missing:?}"
    );
}
