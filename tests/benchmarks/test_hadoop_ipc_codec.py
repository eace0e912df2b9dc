"""The hand-written protocol-buffer codec of the HDFS experiment (``benchmarks/_common/hadoop_ipc.py``),
against values worked out from the protobuf encoding rules (varints, zigzag for sint32, length
prefixes). The codec is exercised end to end by ``benchmarks.hdfs_python_rpc`` on a MiniDFSCluster."""

from __future__ import annotations

from benchmarks._common.hadoop_ipc import _delimited, _field, _fields, _varint, _zigzag


def test_varints_and_zigzag_follow_the_encoding_rules():
    assert _varint(1) == b"\x01"
    assert _varint(300) == b"\xac\x02"
    assert _varint(-1) == b"\xff" * 9 + b"\x01"  # a negative int64: ten bytes
    assert [_zigzag(n) for n in (0, -1, 1, -3, 2147483647)] == [0, 1, 2, 5, 4294967294]


def test_a_message_decodes_to_its_fields():
    inner = _field(1, "/wh/t/snapshot/.snapshot-1.tmp") + _field(2, "/wh/t/snapshot/snapshot-1") + _field(3, 17)
    message = _field(1, 3) + _field(2, inner)
    assert _field(1, "getEditsFromTxid")[:2] == b"\x0a\x10"  # key (1 << 3 | 2), then the length
    decoded = dict(_fields(message))
    assert decoded[1] == 3
    assert dict(_fields(decoded[2])) == {1: b"/wh/t/snapshot/.snapshot-1.tmp", 2: b"/wh/t/snapshot/snapshot-1", 3: 17}
    assert _delimited(b"abc") == b"\x03abc"
