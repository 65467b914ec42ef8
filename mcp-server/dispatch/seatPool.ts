/**
 * The seats of one `baton run`: the configured seats and the extra ones that an adopted job
 * or a card left claimed by an earlier supervisor sits in until its claim ends, the jobs running in
 * them, how many are taken, and their rows in the live table. Must not: claim, start or stop an agent,
 * or decide when a seat may claim (supervisor.ts does); an extra seat never takes a new claim.
 */
import type { BacklogEvent, Card } from '../../core/protocol';
import type { AgentJob } from './agentJob';
import type { SeatRow } from './liveTable';
import { Seat, type SeatConnector } from './seat';

export class SeatPool {
	private readonly seats: Seat[] = [];
	private readonly extra: Seat[] = [];

	constructor(
		count: number,
		private readonly kind: string,
		private readonly run: string,
		private readonly connect: SeatConnector,
	) {
		for (let n = 1; n <= count; n++) {
			this.seats.push(new Seat(n, kind, run, connect));
		}
	}

	/** Every seat, the configured ones first. */
	all(): Seat[] {
		return [...this.seats, ...this.extra];
	}

	inUse(): number {
		return this.all().filter(s => !s.free).length;
	}

	jobs(): AgentJob[] {
		return this.all().flatMap(s => (s.job === undefined ? [] : [s.job]));
	}

	/** The first free configured seat (extra seats never claim). */
	firstFree(): Seat | undefined {
		return this.seats.find(s => s.free);
	}

	/** Warms the connections of the free configured seats. */
	warmFree(): void {
		for (const seat of this.seats) {
			if (seat.free) {
				seat.warm();
			}
		}
	}

	/** An adopted job goes to its own seat when that is free, else to an extra one (never a new claim). */
	place(job: AgentJob): Seat {
		const seat = this.seatFor(job.seat);
		seat.job = job;
		return seat;
	}

	/** A card left claimed by an earlier supervisor keeps its seat (or an extra one) until its claim ends. */
	linger(left: { cardId: string; seat: number; epoch: number }): void {
		this.seatFor(left.seat).lingering = { cardId: left.cardId, epoch: left.epoch };
	}

	/** Seat n when it is free, else a new extra seat n. */
	private seatFor(n: number): Seat {
		let seat = this.seats.find(s => s.n === n && s.free);
		if (seat === undefined) {
			seat = new Seat(n, this.kind, this.run, this.connect);
			this.extra.push(seat);
		}
		return seat;
	}

	/** A card changed: its job hears it, and a lingering claim that ended frees its seat. */
	cardChanged(card: Card, e: BacklogEvent): void {
		for (const job of this.jobs()) {
			if (job.card.id === card.id) {
				job.cardChanged(card, e);
			}
		}
		for (const seat of this.all()) {
			const l = seat.lingering;
			if (l?.cardId === card.id && (card.status !== 'claimed' || card.claimEpoch !== l.epoch)) {
				seat.lingering = undefined;
				this.dropExtra(seat);
			}
		}
	}

	/** Removes `seat` when it is an extra one; true when it was. */
	dropExtra(seat: Seat): boolean {
		const extra = this.extra.indexOf(seat);
		if (extra >= 0) {
			this.extra.splice(extra, 1);
		}
		return extra >= 0;
	}

	close(): void {
		for (const seat of this.all()) {
			seat.close();
		}
	}

	/** The live table's rows, one per seat. */
	rows(): SeatRow[] {
		return this.all().map(s => ({
			seat: s.n,
			cardId: s.job?.card.id,
			title: s.job?.card.title,
			agent: s.job?.identity.agent ?? (s.claiming ? 'claiming…' : undefined),
			startedAt: s.job?.startedAt,
			progress: s.job?.progress ?? s.job?.lastLine,
		}));
	}
}
