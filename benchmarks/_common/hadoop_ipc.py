"""The experiment behind the HDFS notifier's JVM helper: ``getEditsFromTxid`` spoken from Python.

Hadoop IPC, version 9, protocol buffers, **simple authentication only** (no SASL, so no
Kerberos and no ``hadoop.rpc.protection``), one NameNode (no HA failover): what a Python-only
notifier would have to grow. The wire format is Hadoop's own (``RpcHeader.proto``,
``IpcConnectionContext.proto``, ``ProtobufRpcEngine.proto``, ``ClientNamenodeProtocol.proto``,
``inotify.proto``); the few messages it needs are encoded by hand below.

Used by ``benchmarks/hdfs_python_rpc.py`` only: it measures the call against the JVM helper and
finds what the product would lose by it (see docs/hdfs.md, "Why a JVM helper").
"""

from __future__ import annotations

import os
import socket
import struct
from collections.abc import Iterator
from dataclasses import dataclass

__all__ = ["InotifyClient", "Rename"]

_PROTOCOL = "org.apache.hadoop.hdfs.protocol.ClientProtocol"
_CONTEXT_CALL_ID = -3
_RPC_PROTOCOL_BUFFER = 2
_EVENT_RENAME = 3


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1  # negative int32/int64 are ten-byte varints
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, value: int | bytes | str) -> bytes:
    if isinstance(value, int):
        return _varint(number << 3) + _varint(value)
    data = value.encode() if isinstance(value, str) else value
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _zigzag(value: int) -> int:
    return (value << 1) ^ (value >> 31)


def _delimited(message: bytes) -> bytes:
    return _varint(len(message)) + message


def _read_varint(data: bytes, at: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, at


def _fields(data: bytes) -> Iterator[tuple[int, int | bytes]]:
    """``(field number, value)`` of a message: varints as ints, length-delimited as bytes."""
    at = 0
    while at < len(data):
        key, at = _read_varint(data, at)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, at = _read_varint(data, at)
            yield number, value
        elif wire == 2:
            length, at = _read_varint(data, at)
            yield number, data[at : at + length]
            at += length
        else:
            raise ValueError(f"wire type {wire} is not used by these messages")


@dataclass(frozen=True)
class Rename:
    txid: int
    src: str
    dst: str


class InotifyClient:
    """One IPC connection to a NameNode, as ``user``, calling ``getEditsFromTxid``."""

    def __init__(self, host: str, port: int, user: str) -> None:
        self._socket = socket.create_connection((host, port), timeout=30)
        self._client_id = os.urandom(16)
        self._call_id = 0
        self._socket.sendall(b"hrpc" + bytes([9, 0, 0]))  # version 9, service class 0, auth NONE
        user_info = _field(1, user)
        context = _field(2, user_info) + _field(3, _PROTOCOL)
        self._send(_CONTEXT_CALL_ID, [context])

    def _send(self, call_id: int, messages: list[bytes]) -> None:
        # callId and retryCount are sint32 (zigzag); retryCount 0 is a first try.
        header = (_field(1, _RPC_PROTOCOL_BUFFER) + _field(2, 0) + _field(3, _zigzag(call_id))
                  + _field(4, self._client_id) + _field(5, 0))
        body = _delimited(header) + b"".join(_delimited(message) for message in messages)
        self._socket.sendall(struct.pack(">I", len(body)) + body)

    def _receive(self) -> bytes:
        length = struct.unpack(">I", self._exactly(4))[0]
        data = self._exactly(length)
        header_length, at = _read_varint(data, 0)
        header = dict(_fields(data[at : at + header_length]))
        if header.get(2, 0) != 0:
            raise RuntimeError(f"{header.get(4, b'').decode()}: {header.get(5, b'').decode()}")
        body_at = at + header_length
        body_length, at = _read_varint(data, body_at)
        return data[at : at + body_length]

    def _exactly(self, count: int) -> bytes:
        chunks = bytearray()
        while len(chunks) < count:
            chunk = self._socket.recv(count - len(chunks))
            if not chunk:
                raise ConnectionError("the NameNode closed the connection")
            chunks += chunk
        return bytes(chunks)

    def _call(self, method: str, request: bytes) -> dict[int, int | bytes]:
        self._call_id += 1
        header = _field(1, method) + _field(2, _PROTOCOL) + _field(3, 1)  # protocol version 1
        self._send(self._call_id, [header, request])
        return dict(_fields(self._receive()))

    def current_txid(self) -> int:
        """``getCurrentEditLogTxid``: where a new stream starts (as ``HdfsAdmin``'s does)."""
        return int(self._call("getCurrentEditLogTxid", b"")[1])

    def edits_from(self, txid: int) -> tuple[int, list[Rename]]:
        """The renames the NameNode's edit log holds from ``txid`` on, and the next txid to ask."""
        response = self._call("getEditsFromTxid", _field(1, txid))
        events_list = response[1]
        assert isinstance(events_list, bytes)
        renames: list[Rename] = []
        last = txid - 1
        for number, value in _fields(events_list):
            if number == 3 and isinstance(value, int) and value < 1 << 63:  # lastTxid; -1: none
                last = max(last, value)
            if number != 5 or not isinstance(value, bytes):
                continue
            batch = list(_fields(value))
            batch_txid = next(int(v) for n, v in batch if n == 1 and isinstance(v, int))
            for n, event in batch:
                if n != 2 or not isinstance(event, bytes):
                    continue
                parts = dict(_fields(event))
                if parts.get(1) == _EVENT_RENAME and isinstance(parts.get(2), bytes):
                    rename = dict(_fields(parts[2]))  # type: ignore[arg-type]
                    renames.append(Rename(batch_txid, bytes(rename[1]).decode(), bytes(rename[2]).decode()))  # type: ignore[arg-type]
        return last + 1, renames

    def close(self) -> None:
        self._socket.close()
