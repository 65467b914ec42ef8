/**
 * The review parts of the detail pane: for a card in review, who completed it, who must
 * review it, the reviewing agent if one holds it, and Approve / Request changes (the same moves as a
 * drop on Done / Ready, so they ask and confirm the same way), held back while its check runs; for a
 * card sent back, the reviewer's note, the failed check's output or why its landing came back; for an
 * approved card in its base's landing queue, "Landing now" or its place in line and who approved it; and the result, rendered as markdown through markdown.ts. It decides nothing: the moves are
 * planMove's and the verdict the hub's.
 */
import type { Card, LandingEntry } from '../core/protocol';
import { landingLine } from '../core/rules/landing';
import { checksSentence } from './checksView';
import type { ColumnId } from './columns';
import { section } from './detailLog';
import { renderMarkdown } from './markdown';
import { planMove } from './moves';
import { button, el } from './dom';

/** The card's part in the landing queue: its entry while it is in line, the hand-over it came back with. */
export interface CardLanding {
	entry?: LandingEntry | undefined;
	returned?: string | undefined;
}

/** The review box of a card in review (or the note of one sent back); undefined for other cards. */
export function reviewBox(
	card: Card,
	actor: string | undefined,
	nowMs: number,
	move: (cardId: string, to: ColumnId) => void,
	landing: CardLanding = {},
): HTMLElement | undefined {
	if (landing.entry !== undefined && card.status !== 'done') {
		const box = el('div', 'review-box review-box--landing');
		box.setAttribute('role', 'status');
		const line = landingLine({ ...landing.entry, actor: landing.entry.actor === actor ? 'you' : landing.entry.actor });
		box.append(el('p', 'review-state', `${line}.`));
		box.append(
			el('p', 'muted', 'One landing at a time moves a base; the others wait their turn (baton queue lists them).'),
		);
		return box;
	}
	if (card.status !== 'review') {
		if (card.status !== 'ready' || card.handoff === null || card.handoff === undefined) {
			return undefined;
		}
		const box = el('div', 'review-box review-box--handoff');
		const failed = card.checks?.state === 'failed' || card.checks?.state === 'timed_out' ? card.checks : undefined;
		box.append(
			el(
				'p',
				'review-state',
				landing.returned !== undefined && landing.returned === card.handoff
					? 'Came back from landing: its base did not move. The next attempt starts from why:'
					: failed === undefined
						? 'Changes requested. The next attempt starts from this note:'
						: `${checksSentence(failed)} The next attempt starts from its output:`,
			),
		);
		box.append(el('blockquote', 'review-note', card.handoff));
		return box;
	}
	const box = el('div', 'review-box');
	box.setAttribute('role', 'group');
	box.setAttribute('aria-label', `Review of ${card.id}`);
	const who = card.review === 'agent' ? 'a reviewing agent or a human' : 'a human';
	const by = card.completedBy ?? undefined;
	const lines = [
		`In review: waits for ${who}.`,
		by === undefined ? '' : `Completed by ${by === actor ? 'you' : by}.`,
		card.claimOwner === null ? '' : `${card.claimOwner} is reviewing it now.`,
		card.checks === undefined ? '' : checksSentence(card.checks),
	].filter(s => s !== '');
	box.append(el('p', 'review-state', lines.join(' ')));
	const conflicts = card.workspace?.conflicts;
	if (conflicts !== undefined) {
		const base = card.workspace?.base ?? 'its base';
		box.append(
			el(
				'p',
				'review-conflicts',
				`Its branch no longer merges into ${base} (${conflicts.files.join(', ')}): approving would send it back. Request changes to send it back now; its next attempt starts from the conflict markers.`,
			),
		);
	}
	if (card.checks?.state === 'running') {
		// The hub refuses an approval while the check runs; the box says so instead of offering it.
		box.append(el('p', 'muted', 'Approve waits until the checks pass; a failure sends the card back to an agent.'));
		return box;
	}
	const approve = planMove(card, 'done', { actor, nowMs, waitingOn: [] });
	const changes = planMove(card, 'ready', { actor, nowMs, waitingOn: [] });
	if (approve.kind === 'refuse') {
		box.append(el('p', 'muted', approve.reason));
		return box;
	}
	const actions = el('div', 'review-actions');
	const ok = button('Approve', 'btn btn-primary review-approve', () => move(card.id, 'done'));
	ok.title = 'Mark it done: its dependents become claimable';
	actions.append(ok);
	if (changes.kind === 'request') {
		const back = button('Request changes…', 'btn review-changes', () => move(card.id, 'ready'));
		back.title = 'Send it back to Ready with a note for the next attempt';
		actions.append(back);
	}
	box.append(actions);
	return box;
}

/** The review lines of the facts list: who completed it, who reviews it, and who must. */
export function reviewFacts(card: Card, add: (key: string, value: string) => void): void {
	if (card.status === 'review') {
		add('Completed by', card.completedBy ?? '—');
		if (card.claimOwner !== null) {
			add('Reviewer', card.claimOwner);
		}
	}
	if ((card.review ?? 'none') !== 'none') {
		add('Review', card.review === 'agent' ? 'by an agent (or a human)' : 'by a human');
	}
	if (card.checks !== undefined && card.status !== 'done') {
		add(
			'Checks',
			checksSentence(card.checks)
				.replace(/^Checks /, '')
				.replace(/\.$/, ''),
		);
	}
}

/** The card's result as markdown (links open outside), or undefined when it has none. */
export function resultSection(card: Card): HTMLElement | undefined {
	if (card.result === null || card.result.trim() === '') {
		return undefined;
	}
	const s = section('Result');
	const md = el('div', 'markdown detail-result');
	md.append(renderMarkdown(card.result));
	s.body.append(md);
	return s.root;
}
