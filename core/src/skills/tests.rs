use super::{Skill, Skills, check_path, encode_segments, mime_type};

fn skill_md(name: &str) -> String {
    format!("---\nname: {name}\ndescription: Does {name} things\n---\n# {name}\n")
}

#[test]
fn paths_that_could_leave_a_skill_are_refused() {
    for bad in [
        "",
        "/etc/passwd",
        "a//b",
        "../x",
        "a/../../x",
        "./a",
        "a\\..\\b",
        "a\0b",
    ] {
        assert!(check_path(bad).is_err(), "{bad:?}");
    }
    assert_eq!(
        check_path("templates/eu/invoice.md").expect("fine"),
        ["templates", "eu", "invoice.md"]
    );
}

#[test]
fn segments_are_percent_encoded_where_a_uri_needs_it() {
    let segments = ["my notes".to_owned(), "été%.md".to_owned()];
    assert_eq!(encode_segments(&segments), "my%20notes/%C3%A9t%C3%A9%25.md");
    assert_eq!(super::decode("my%20notes"), "my notes");
}

#[test]
fn mime_types_come_from_the_extension_then_the_bytes() {
    assert_eq!(mime_type("SKILL.md", b""), "text/markdown");
    assert_eq!(mime_type("run.PY", b""), "text/x-python");
    assert_eq!(mime_type("LICENSE", b"MIT"), "text/plain");
    assert_eq!(mime_type("blob", &[0xff, 0x00]), "application/octet-stream");
}

#[test]
fn a_skill_is_refused_with_a_message_naming_what_is_wrong() {
    let skills = Skills::default();
    let free = |_: &str| false;
    let cases = [
        (Skill::new("pdf", skill_md("other")), "must be its name"),
        (Skill::new("a/../pdf", skill_md("pdf")), "`.` and `..`"),
        (
            Skill::new("pdf", skill_md("pdf")).file("/abs", "x"),
            "must be relative",
        ),
        (
            Skill::new("pdf", skill_md("pdf")).file("../up", "x"),
            "`.` and `..`",
        ),
        (
            Skill::new("pdf", skill_md("pdf")).file("SKILL.md", "x"),
            "twice",
        ),
        (Skill::new("pdf", "no frontmatter"), "frontmatter"),
    ];
    for (skill, expected) in cases {
        let err = skills.add(skill, &free).expect_err(expected).to_string();
        assert!(err.contains(expected), "{expected}: {err}");
    }
    let mut big = Skill::new("big", skill_md("big"));
    for i in 0..super::MAX_FILES_PER_SKILL {
        big = big.file(format!("f{i}.txt"), "x");
    }
    let err = skills.add(big, &free).expect_err("513 files").to_string();
    assert!(err.contains("512"), "{err}");
    let huge = Skill::new("huge", skill_md("huge"))
        .file("data.bin", vec![0u8; super::MAX_BYTES_PER_SKILL as usize]);
    assert!(skills.add(huge, &free).is_err());
    assert!(skills.snapshot().is_empty(), "nothing refused was served");
}

#[test]
fn nested_skills_share_their_files_and_conflicts_are_refused() {
    let skills = Skills::default();
    let free = |_: &str| false;
    let parent = Skill::new("tools", skill_md("tools"))
        .file("pdf/SKILL.md", skill_md("pdf"))
        .file("pdf/a.md", "A");
    skills.add(parent, &free).expect("parent");
    let clash = Skill::new("tools/pdf", skill_md("pdf")).file("a.md", "B");
    let err = skills
        .add(clash, &free)
        .expect_err("other bytes")
        .to_string();
    assert!(err.contains("different contents"), "{err}");
    let child = Skill::new("tools/pdf", skill_md("pdf")).file("a.md", "A");
    skills.add(child, &free).expect("nested, same bytes");
    let index = skills.snapshot();
    let root = index.directory("skill://tools").expect("root");
    assert!(
        root.contains_key("skill://tools/pdf"),
        "the nested root is a subdirectory"
    );
    let other = Skill::new("tools/pdf/x", skill_md("x"));
    skills.add(other, &free).expect("deeper");
    let taken = |uri: &str| uri == "skill://mine/SKILL.md";
    let err = skills
        .add(Skill::new("mine", skill_md("mine")), &taken)
        .expect_err("taken");
    assert!(
        err.to_string().contains("already registered as a resource"),
        "{err}"
    );
    assert!(skills.remove("tools/pdf/x"));
    assert!(skills.remove("skill://tools/pdf/SKILL.md"));
    assert!(!skills.remove("tools/pdf"));
}
