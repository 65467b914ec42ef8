/**
 * One request from frame to answer: it starts when its connection's flow control lets it (flow.ts: a
 * few at a time per connection, in order, not while the client leaves answers unread), the method is
 * known, the params pass the protocol's schema, a human verb (humanVerbs.ts) is refused to an agent and
 * otherwise names its origin on its events, a `mutating` method (the protocol table's flag) passes
 * the store guard's disk gate, the handler table runs it, and the answer is sent within the size limit. Every failure is mapped once to a
 * BatonError: a fatal store error stops the hub, an outage is logged once per 10 s, anything else
 * is `internal` with a ref (the stack goes to the log, never to the client). Requests in flight are
 * remembered so that a store failure answers them all. It decides nothing about cards.
 */
import { randomUUID } from 'node:crypto';
import type { OpContext } from '../../core/backlog';
import { BatonError, describeIssues } from '../../core/errors';
import { findNul } from '../../core/protocol/cardText';
import { frameBytes, tooLargeAnswer } from '../../core/protocol/frameSize';
import { createLogger } from '../../core/log';
import { type Method, type RequestFrame, isMethod, limits, methods } from '../../core/protocol';
import { type Connection, sendError } from './connections';
import type { HandlerRequest, Handlers } from './handlers';
import { gateHumanVerb, humanVerbOf, originOf } from './humanVerbs';
import type { SeatCredentials } from './seatCredentials';
import { type StoreGuard, fatalReason } from './storeGuard';

const log = createLogger('hub').child('requests');

export interface RequestsOptions {
	handlers: Handlers;
	guard: StoreGuard;
	mode: 'pglite' | 'postgres';
	/** The store failed beyond repair (fatalReason): the hub answers everything in flight and stops. */
	onFatal: (reason: string) => void;
	/** The seat credentials (seatCredentials.ts): what a seat connection may do. */
	seats: Pick<SeatCredentials, 'checkScope' | 'checkLive'>;
	/** A dispatched request was answered (or failed) after `seconds` (the MCP latency histogram). */
	onServed?: (conn: Connection, method: Method, seconds: number) => void;
}

export class Requests {
	/** Requests dispatched and not answered yet: a store failure answers them all. */
	private readonly inFlight = new Set<{ conn: Connection; id: number }>();
	/** PostgreSQL unreachable or disk full: when a refusal was last logged, and how many since were not. */
	private downLoggedAt = 0;
	private downUnlogged = 0;

	constructor(private readonly options: RequestsOptions) {}

	/** Runs the request when its connection's flow control lets it (flow.ts), after the ones before it. */
	handle(conn: Connection, frame: RequestFrame, requestBytes: number): void {
		conn.flow.admit(() => this.serve(conn, frame, requestBytes), requestBytes);
	}

	private async serve(conn: Connection, frame: RequestFrame, requestBytes: number): Promise<void> {
		const { id, method } = frame;
		if (!isMethod(method)) {
			sendError(conn, id, new BatonError('invalid_input', `Unknown method "${method}".`));
			return;
		}
		if (conn.seat !== undefined) {
			// An agent `baton run` started: its own card only (before its params are even read).
			try {
				this.options.seats.checkScope(conn.seat, method, frame.params);
			} catch (e) {
				sendError(conn, id, this.toBatonError(e, method));
				return;
			}
		}
		const nul = findNul(frame.params);
		if (nul !== undefined) {
			// Every text field at once: no store keeps a NUL, and failing in the store was `internal`.
			sendError(
				conn,
				id,
				new BatonError(
					'invalid_input',
					`Invalid ${method} params: ${nul} contains a NUL character (\\0), which text in Baton cannot hold; remove it.`,
					{ field: nul },
				),
			);
			return;
		}
		const parsed = methods[method].params.safeParse(frame.params ?? {});
		if (!parsed.success) {
			sendError(
				conn,
				id,
				new BatonError('invalid_input', `Invalid ${method} params: ${describeIssues(parsed.error.issues)}`, {
					issues: parsed.error.issues.map(i => ({ path: i.path.map(String), message: i.message })),
				}),
			);
			return;
		}
		// A person's verb from an agent is refused before anything runs; allowed, its events say who did it.
		const humanVerb = humanVerbOf(method, parsed.data);
		if (humanVerb !== undefined) {
			try {
				gateHumanVerb(conn, humanVerb, parsed.data);
			} catch (e) {
				sendError(conn, id, this.toBatonError(e, method));
				return;
			}
		}
		const ctx: OpContext = {
			actor: conn.actor,
			...(humanVerb === undefined ? {} : { origin: originOf(conn) }),
			...(frame.key === undefined ? {} : { requestKey: frame.key }),
			...(conn.hello?.session === undefined ? {} : { session: conn.hello.session }),
			...(conn.hello?.agent?.kind === undefined ? {} : { kind: conn.hello.agent.kind }),
			...(conn.hello?.agent?.host === undefined ? {} : { host: conn.hello.agent.host }),
		};
		const entry = { conn, id };
		this.inFlight.add(entry);
		const started = performance.now();
		try {
			if (conn.seat !== undefined) {
				// ... and only while its card's claim lasts.
				await this.options.seats.checkLive(conn.seat);
			}
			if (methods[method].mutating) {
				this.options.guard.beforeWrite(requestBytes);
			}
			const result = await this.run(method, { conn, ctx, params: parsed.data, bytes: requestBytes });
			this.options.onServed?.(conn, method, (performance.now() - started) / 1000);
			this.options.guard.succeeded();
			if (!this.inFlight.delete(entry)) {
				return; // already answered: the store failed while this ran
			}
			const answer = JSON.stringify({ id, result });
			const bytes = frameBytes(answer, limits.maxResponse);
			if (bytes > limits.maxResponse) {
				log.warn(`answer to ${method} from ${conn.actor} not sent: ${bytes} bytes`);
				sendError(conn, id, tooLargeAnswer(method, bytes));
			} else {
				conn.flow.send(answer);
			}
		} catch (e) {
			this.options.onServed?.(conn, method, (performance.now() - started) / 1000);
			const error = this.toBatonError(e, method);
			if (this.inFlight.delete(entry)) {
				sendError(conn, id, error);
			}
		}
	}

	/** Answers every request in flight with `error` (the store failed); their handlers' results are dropped. */
	failAll(error: BatonError): void {
		for (const entry of this.inFlight) {
			sendError(entry.conn, entry.id, error);
		}
		this.inFlight.clear();
	}

	/** What the client is told about a failure, logged as it deserves. */
	toBatonError(e: unknown, method: string): BatonError {
		if (BatonError.is(e)) {
			return e;
		}
		const fatal = fatalReason(e, this.options.mode);
		if (fatal !== undefined) {
			this.options.onFatal(fatal);
			return new BatonError('unavailable', this.options.guard.health.message ?? `The Baton store failed (${fatal}).`);
		}
		const known = this.options.guard.classify(e);
		if (known !== undefined) {
			// Every request meets an outage while it lasts: one line per 10 s, with how many it stands for.
			const now = Date.now();
			if (now - this.downLoggedAt >= 10_000) {
				const more = this.downUnlogged > 0 ? ` (and ${this.downUnlogged} more requests refused)` : '';
				log.warn(`${method}: ${known.message}${more}`);
				this.downLoggedAt = now;
				this.downUnlogged = 0;
			} else {
				this.downUnlogged++;
			}
			return known;
		}
		// Never leak SQL, paths or stacks to clients; the stack goes to the hub's log.
		const ref = randomUUID().slice(0, 8);
		log.error(`internal error ${ref} in ${method}`, e);
		return new BatonError(
			'internal',
			`The Baton hub hit an internal error handling ${method} (ref ${ref}); see the hub log.`,
		);
	}

	/** The table's entry for `method`; params were parsed with that method's schema just before. */
	private run<M extends Method>(method: M, request: HandlerRequest<M>): Promise<unknown> {
		const handler: Handlers[M] = this.options.handlers[method];
		return handler(request);
	}
}
