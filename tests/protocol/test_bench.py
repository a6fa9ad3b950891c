from __future__ import annotations

from protocol.bench import measure_gate


def test_measure_gate_reports_rates_for_a_typical_body() -> None:
    # Shape only: timings depend on the machine and are never asserted.
    result = measure_gate(5)
    assert set(result) == {
        "raw_verify_per_s",
        "full_gate_per_s",
        "full_over_raw",
        "body_bytes",
        "datagram_bytes",
    }
    assert result["raw_verify_per_s"] > 0
    assert result["full_gate_per_s"] > 0
    assert result["full_over_raw"] == result["full_gate_per_s"] / result["raw_verify_per_s"]
    assert 120 <= result["body_bytes"] <= 140
