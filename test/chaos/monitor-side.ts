/**
 * Retry-After as the monitor itself lived it: an undici interceptor for the monitor's client that
 * notes when each request left and when each 429 (or 503 with Retry-After) was read in full, the
 * moment the client's gate closes. Judging at the proxy instead counts a request that left before
 * the monitor could read the 429, and on a loaded machine such a request can reach the proxy a
 * second later.
 */
import { Agent, type Dispatcher } from 'undici';
import { expectedWindowMs, type RetryAfterWindow, type Violation } from './proxy.js';

export interface MonitorSideRecorder {
  dispatcher: Dispatcher;
  /** While false, nothing is recorded (the final sweep, which stands for a later process). */
  recording: boolean;
  violations(): Violation[];
  close(): Promise<void>;
}

/** Windows end this soon before their end without counting: the gate's clock is not ours. */
const END_TOLERANCE_MS = 5;

export function monitorSideRecorder(): MonitorSideRecorder {
  const sends: Array<{ environment: string; at: number; method: string; path: string }> = [];
  const windows: RetryAfterWindow[] = [];
  const agent = new Agent();
  const recorder: MonitorSideRecorder = {
    recording: true,
    dispatcher: agent.compose((dispatch) => (options, handler) => {
      const path = options.path;
      const environment = /^\/env\/([^/]+)/.exec(path)?.[1] ?? 'default';
      if (recorder.recording) {
        sends.push({ environment, at: performance.now(), method: options.method, path });
      }
      let status = 0;
      let retryAfter: string | undefined;
      const wrapped: Dispatcher.DispatchHandler = {
        onRequestStart: (controller, context) => handler.onRequestStart?.(controller, context),
        onResponseStart: (controller, statusCode, headers, message) => {
          status = statusCode;
          const value = headers['retry-after'];
          retryAfter = Array.isArray(value) ? value.join(', ') : value;
          handler.onResponseStart?.(controller, statusCode, headers, message);
        },
        onResponseData: (controller, chunk) => handler.onResponseData?.(controller, chunk),
        onResponseEnd: (controller, trailers) => {
          // Noted before the client sees the end, which is when its gate closes.
          if (recorder.recording && (status === 429 || (status === 503 && retryAfter))) {
            const from = performance.now();
            const ms = retryAfter === undefined ? 60_000 : expectedWindowMs(retryAfter, Date.now());
            windows.push({ environment, from, until: from + ms });
          }
          handler.onResponseEnd?.(controller, trailers);
        },
        onResponseError: (controller, error) => handler.onResponseError?.(controller, error),
      };
      return dispatch(options, wrapped);
    }),
    violations() {
      const found: Violation[] = [];
      for (const send of sends) {
        for (const w of windows) {
          if (w.environment !== send.environment) continue;
          if (send.at > w.from && send.at < w.until - END_TOLERANCE_MS) {
            found.push({ ...send, msInsideWindow: send.at - w.from });
          }
        }
      }
      return found;
    },
    close: () => agent.close(),
  };
  return recorder;
}
