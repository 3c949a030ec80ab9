"""controller.service_metrics.identifiers: numeric CS-IDs and CSCI-IDs as text inside,
numbers outside."""

from __future__ import annotations

from controller.service_metrics import identifiers


def test_numeric_identifiers_leave_as_numbers_at_any_depth() -> None:
    document = {
        "cs-id": "7",
        "csci-id": "188.3.67.3:67",
        "candidate": [
            {"csci-id": "42", "tst": "12.5", "name": "42"},
            {"csci-id": "sci-1", "previous-csci-id": "4294967295", "new-csci-id": "4294967296"},
        ],
        "nested": {"deeper": [{"cs-id": "0"}], "tags": ["1", "2"]},
        "count": 3,
    }
    assert identifiers.as_json(document) == {
        "cs-id": 7,
        "csci-id": "188.3.67.3:67",
        "candidate": [
            {"csci-id": 42, "tst": "12.5", "name": "42"},  # not an identifier leaf: text
            {"csci-id": "sci-1", "previous-csci-id": 4294967295, "new-csci-id": "4294967296"},
        ],
        "nested": {"deeper": [{"cs-id": 0}], "tags": ["1", "2"]},  # a leaf-list stays
        "count": 3,
    }


def test_non_ascii_digits_are_not_numbers() -> None:
    seven = "\u0667"  # ARABIC-INDIC DIGIT SEVEN: str.isdigit, but no uint32
    assert identifiers.as_json({"cs-id": seven}) == {"cs-id": seven}


def test_as_text_undoes_as_json() -> None:
    document = {"cs-id": 7, "entry": [{"csci-id": 42, "gas": 5}], "flag": True}
    assert identifiers.as_text(document) == {
        "cs-id": "7",
        "entry": [{"csci-id": "42", "gas": 5}],
        "flag": True,
    }
    assert identifiers.as_json(identifiers.as_text(document)) == document
