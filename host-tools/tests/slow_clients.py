#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Hold N connections to HOST:PORT from source address SRC, sending
nothing (a slow client: no request, no TLS handshake). After a second,
write how many the server kept open (a refused one is closed at once)
to OUT, then hold them until killed.

    slow_clients.py SRC HOST PORT N OUT
"""
import socket
import sys
import time

src, host, port, n, out = sys.argv[1], sys.argv[2], int(sys.argv[3]), \
    int(sys.argv[4]), sys.argv[5]
conns = []
for _ in range(n):
    s = socket.socket()
    s.bind((src, 0))
    try:
        s.connect((host, port))
    except OSError:
        continue                    # refused: not kept
    conns.append(s)
time.sleep(1)
alive = 0
for s in conns:
    s.setblocking(False)
    try:
        alive += s.recv(1) != b""   # data: open (never sent here)
    except BlockingIOError:
        alive += 1                  # nothing to read: still open
    except OSError:
        pass                        # reset: closed
with open(out, "w") as f:
    f.write("%d\n" % alive)
time.sleep(3600)
