"""A DNS resolver that answers every query at once with NXDOMAIN, for the soak on a machine
whose configured resolver never answers: `python3 bench/probes/nxdomain-resolver.py` (as root,
it listens on 127.0.0.53:53), then `nameserver 127.0.0.53` in /etc/resolv.conf for the run."""
import socket
import struct

server = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
server.bind(("127.0.0.53", 53))
while True:
    query, peer = server.recvfrom(4096)
    if len(query) < 12:
        continue
    ident, flags, questions = struct.unpack("!HHH", query[:6])
    end = 12
    try:
        for _ in range(questions):  # each: labels, a zero byte, type and class
            while query[end] != 0:
                end += query[end] + 1
            end += 5
    except IndexError:
        continue
    recursion_desired = flags & 0x0100
    header = struct.pack("!HHHHHH", ident, 0x8000 | recursion_desired | 0x0080 | 3, questions, 0, 0, 0)
    server.sendto(header + query[12:end], peer)
