"""Forwards TCP connections: forward.py LISTEN_HOST PORT TARGET_HOST accepts on
LISTEN_HOST:PORT and joins each connection to TARGET_HOST:PORT, both ways, until it is
killed. tests/mpi/netns.sh runs one on each side of a veth pair so that a rank in
another network namespace reaches mpirun's PMIx server, which listens on 127.0.0.1 of
mpirun's namespace only."""
import socket
import sys
import threading


def pipe(source, sink):
    try:
        while True:
            data = source.recv(65536)
            if not data:
                break
            sink.sendall(data)
    except OSError:
        pass
    for end in (source, sink):
        try:
            end.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass


def main():
    listen_host, port, target_host = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    server = socket.socket()
    server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    server.bind((listen_host, port))
    server.listen(16)
    while True:
        client, _ = server.accept()
        target = socket.create_connection((target_host, port))
        threading.Thread(target=pipe, args=(client, target), daemon=True).start()
        threading.Thread(target=pipe, args=(target, client), daemon=True).start()


if __name__ == "__main__":
    main()
