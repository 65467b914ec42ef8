/**
 * Whether a dispatched agent has gone silent for --idle-seconds (to notice a hung agent): the
 * last sign of life is its newest output line, a call of its own seen on its card (heartbeat, reserve,
 * comment, an inbox read), or the card's progressAt, which a heartbeat that changes nothing still
 * moves without an event. Keeps one timestamp; asks the hub only through the `read` it is given, and
 * only once the silence is long enough. Must not stop anything itself: it answers, the job acts.
 */
import type { BacklogEvent, Card } from '../../core/protocol';

/** Events on its card that only the holding agent's own calls make. */
const lifeSigns = new Set(['heartbeat', 'reserved', 'commented', 'delivered']);

export class Silence {
	private last: number;
	private checking = false;

	/** `idleSeconds` 0: never silent. `since`: when the clock starts (the start, or an adoption). */
	constructor(
		private readonly idleSeconds: number,
		since: number,
	) {
		this.last = since;
	}

	/** Output just arrived. */
	output(): void {
		this.last = Date.now();
	}

	/** An event on the card: a life sign when it is one of `agent`'s own calls. */
	event(event: Pick<BacklogEvent, 'type' | 'actor'>, agent: string): void {
		if (lifeSigns.has(event.type) && event.actor === agent) {
			this.last = Date.now();
		}
	}

	/**
	 * Calls `hung` when the agent has been silent for idleSeconds and the card, read afresh with
	 * `read`, shows no newer heartbeat and is still `holds`'s. One read at a time.
	 */
	check(
		read: () => Promise<Card>,
		holds: (card: Card) => boolean,
		hung: () => void,
		failed: (e: unknown) => void,
	): void {
		const idleMs = this.idleSeconds * 1000;
		if (idleMs === 0 || this.checking || Date.now() - this.last < idleMs) {
			return;
		}
		this.checking = true;
		read()
			.then(card => {
				this.last = Math.max(this.last, card.progressAt === null ? 0 : Date.parse(card.progressAt));
				if (holds(card) && Date.now() - this.last >= idleMs) {
					hung();
				}
			})
			.catch(failed)
			.finally(() => {
				this.checking = false;
			});
	}
}
