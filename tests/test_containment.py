

def test_spec_file_name_cannot_carry_markup_into_generated_files(tmp_path, capsys):
    # regression: rules/x--><img src=x onerror=...>.yaml closed the notice comment at the top of
    # the runbook page and put a live <img onerror> on the site
    root = make(tmp_path)
    (root / "rules" / "demo.yaml").rename(root / "rules" / "x--><img src=x onerror=alert(5)>.yaml")
    code, out = build(root, capsys)
    assert code == 1
    assert ("rules/x--><img src=x onerror=alert(5)>.yaml:1:1: error RG743 spec file name 'rules/x--><img src=x "
            "onerror=alert(5)>.yaml' has the segment 'x--><img src=x onerror=alert(5)>.yaml': use letters, "
            "digits, `.`, `_` and `-` only, not starting with `-` or `.` (found '>'); rename the file (its "
            "name is written into the notice of every file made from it, pages included)") in out
    assert not (root / "runbooks").exists()
