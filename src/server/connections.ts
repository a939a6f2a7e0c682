/**
 * The open connections of the daemon's server and their deadlines (docs/deploy.md, "Listener
 * limits"). Two rules keep a flood of slow clients from shutting Prometheus and the liveness probe
 * out:
 * - a connection past its deadline is closed, not merely answered: a `408` followed by
 *   `socket.end()` left the socket half-open for as long as the client kept sending, holding its
 *   slot forever;
 * - when every slot is taken, a new connection does not wait or get refused: the oldest connection
 *   with no request in the server's hands is closed for it, taken from the address holding the
 *   most connections. A scrape or a probe opens a connection and sends its request at once, so it
 *   always finds a slot, and one address flooding the server evicts its own connections first.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface ConnectionLimits {
  /** Most connections open at once. */
  limit: number;
  /** From a connection's opening (its TLS handshake included) to its first request's headers. */
  firstMs: number;
  /** From the end of a response to the next request's headers on a kept-alive connection. */
  nextMs: number;
  /** From a request's headers to the end of its response (a client that reads it slowly). */
  requestMs: number;
}

interface Connection {
  key: string;
  raw: Socket;
  /** The socket HTTP speaks on: `raw`, or its TLS socket once the handshake is done. */
  front: Socket | null;
  address: string;
  inFlight: number;
  timer: NodeJS.Timeout | undefined;
}

/** What the table did, for the server's counts and logs. */
export type ConnectionEvent = 'evicted' | 'refused' | 'header_timeout' | 'request_timeout';

export class ConnectionTable {
  /** By `address|port`, in the order they opened: the first idle one is the oldest. */
  private readonly open = new Map<string, Connection>();
  private readonly perAddress = new Map<string, number>();

  constructor(
    private readonly limits: ConnectionLimits,
    private readonly onEvent: (event: ConnectionEvent) => void,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** A new TCP connection: takes a slot (evicting one when full) and starts its deadline. */
  admit(raw: Socket, plain: boolean): void {
    const key = keyOf(raw);
    if (key === null || raw.remoteAddress === undefined) {
      raw.destroy();
      return;
    }
    if (this.open.size >= this.limits.limit) {
      const victim = this.victim();
      if (victim === undefined) {
        // Every slot has a request in the server's hands: those are served first.
        this.onEvent('refused');
        raw.destroy();
        return;
      }
      this.onEvent('evicted');
      this.close(victim);
    }
    const connection: Connection = {
      key,
      raw,
      front: plain ? raw : null,
      address: raw.remoteAddress,
      inFlight: 0,
      timer: undefined,
    };
    this.open.set(key, connection);
    this.perAddress.set(connection.address, (this.perAddress.get(connection.address) ?? 0) + 1);
    this.await(connection, this.limits.firstMs);
    raw.once('close', () => this.forget(connection));
  }

  /** The TLS handshake of a connection is done: HTTP now speaks on `socket`. */
  secured(socket: Socket): void {
    const connection = this.find(socket);
    if (connection !== undefined) connection.front = socket;
  }

  /** A request's headers arrived: no header deadline until its response ends. */
  requestStarted(req: IncomingMessage, res: ServerResponse): void {
    const connection = this.find(req.socket);
    if (connection === undefined) return;
    connection.inFlight += 1;
    clearTimeout(connection.timer);
    connection.timer = setTimeout(() => {
      this.onEvent('request_timeout');
      this.close(connection);
    }, this.limits.requestMs).unref();
    res.once('close', () => {
      connection.inFlight -= 1;
      if (connection.inFlight > 0 || connection.raw.destroyed) return;
      this.await(connection, this.limits.nextMs);
    });
  }

  /** Closes every connection (shutdown). */
  closeAll(): void {
    for (const connection of [...this.open.values()]) this.close(connection);
  }

  private await(connection: Connection, ms: number): void {
    clearTimeout(connection.timer);
    connection.timer = setTimeout(() => this.expire(connection), ms).unref();
  }

  /** Past the header deadline: a 408 when HTTP is spoken, then the socket is closed for good. */
  private expire(connection: Connection): void {
    this.onEvent('header_timeout');
    this.forget(connection);
    const { front, raw } = connection;
    if (front === null || !front.writable) {
      raw.destroy();
      return;
    }
    front.end('HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n\r\n', () => raw.destroy());
    // A client that reads nothing may never let the answer out; it is closed all the same.
    setTimeout(() => raw.destroy(), 1_000).unref();
  }

  /**
   * The connection to close for a new one: among those with no request in the server's hands,
   * the oldest of the address holding the most connections.
   */
  private victim(): Connection | undefined {
    let chosen: Connection | undefined;
    let chosenCount = 0;
    for (const connection of this.open.values()) {
      if (connection.inFlight > 0) continue;
      const count = this.perAddress.get(connection.address) ?? 0;
      if (count > chosenCount) {
        chosen = connection;
        chosenCount = count;
      }
    }
    return chosen;
  }

  private close(connection: Connection): void {
    this.forget(connection);
    connection.raw.destroy();
  }

  private forget(connection: Connection): void {
    clearTimeout(connection.timer);
    if (this.open.get(connection.key) !== connection) return;
    this.open.delete(connection.key);
    const left = (this.perAddress.get(connection.address) ?? 1) - 1;
    if (left > 0) this.perAddress.set(connection.address, left);
    else this.perAddress.delete(connection.address);
  }

  private find(socket: Socket): Connection | undefined {
    const key = keyOf(socket);
    return key === null ? undefined : this.open.get(key);
  }
}

/** A connection's identity that its raw and TLS sockets share: the peer's address and port. */
function keyOf(socket: Socket): string | null {
  if (socket.remoteAddress === undefined || socket.remotePort === undefined) return null;
  return `${socket.remoteAddress}|${socket.remotePort}`;
}
