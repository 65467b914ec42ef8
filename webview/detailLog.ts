/**
 * The record sections of the detail pane: earlier attempts (each claim and how it ended, review
 * verdicts and their notes included) and the history (the card's events, newest first), both from
 * `card/get`. Builds elements with text only (no HTML), except a completion's result: markdown on
 * one line, sanitised by markdown.ts, as a done card shows it. It fetches nothing and keeps no state.
 */
import type { Attempt, BacklogEvent } from '../core/protocol';
import { usageText } from '../core/rules/usage';
import { el } from './dom';
import { renderMarkdownSummary } from './markdown';

export function section(title: string): { root: HTMLElement; body: HTMLElement } {
	const root = el('section', 'detail-section');
	const h = el('h3', 'detail-heading', title);
	const body = el('div', 'detail-section-body');
	root.append(h, body);
	return { root, body };
}

const eventWords: Partial<Record<BacklogEvent['type'], string>> = {
	review_requested: 'submitted for review',
	approved: 'approved',
	changes_requested: 'changes requested',
	land_conflicted: 'landing conflicted',
	commented: 'posted a message',
	delivered: 'messages delivered',
};

export function describeEvent(e: BacklogEvent): string {
	const bits: string[] = [eventWords[e.type] ?? e.type];
	if (e.type === 'commented' && e.data.message?.question === true) {
		bits[0] = 'asked a question';
	}
	if (e.type === 'checks_finished') {
		bits[0] = `checks ${e.data.state === 'timed_out' ? 'timed out' : (e.data.state ?? 'ended')}`;
	}
	if (e.data.reason !== undefined) {
		bits.push(`— ${e.data.reason}`);
	} else if (e.data.note !== undefined) {
		bits.push(`— ${e.data.note}`);
	}
	if (e.data.forced === true) {
		bits.push('(forced)');
	}
	if (e.data.dependsOn !== undefined) {
		bits.push(e.data.dependsOn.join(', '));
	}
	return bits.join(' ');
}

/** Outcomes a review gave an attempt, for their own look. */
const reviewOutcomes = new Set(['in review', 'approved', 'changes requested']);

export function attemptsSection(attempts: readonly Attempt[]): HTMLElement {
	const att = section('Attempts');
	const ul = el('ul', 'attempts');
	for (const a of attempts) {
		const li = el('li', 'attempt');
		li.append(`#${a.epoch} ${a.owner}: `);
		const outcome = el('span', `attempt-outcome outcome-${a.outcome.replace(/\s+/g, '-')}`, a.outcome);
		li.append(outcome);
		const bits: string[] = [];
		if (a.progress !== null) {
			bits.push(`${a.progress}%`);
		}
		if (a.progressNote !== null) {
			bits.push(a.progressNote);
		}
		if (a.usage !== undefined) {
			bits.push(usageText(a.usage));
		}
		if (a.reason !== null) {
			// A review's verdict carries the reviewer's note as the attempt's reason.
			bits.push(a.outcome === 'changes requested' ? `note: ${a.reason}` : a.reason);
		}
		if (bits.length > 0) {
			li.append(` · ${bits.join(' · ')}`);
		}
		if (reviewOutcomes.has(a.outcome)) {
			li.classList.add('attempt--review');
		}
		ul.append(li);
	}
	att.body.append(ul);
	return att.root;
}

export function historySection(history: readonly BacklogEvent[] | undefined): HTMLElement {
	const hist = section('History');
	if (history === undefined) {
		hist.body.append(el('p', 'muted', 'Loading…'));
		return hist.root;
	}
	const ol = el('ol', 'history');
	for (const e of [...history].reverse()) {
		const li = el('li', 'history-item');
		const time = el('time', 'history-time', new Date(e.at).toLocaleString());
		time.dateTime = e.at;
		const what = el('span', 'history-what', describeEvent(e));
		if (e.data.result !== undefined && e.data.result.trim() !== '') {
			const result = el('span', 'history-result markdown-line');
			result.append(renderMarkdownSummary(e.data.result));
			what.append(' — ', result);
		}
		li.append(time, el('span', 'history-actor', e.actor), what);
		ol.append(li);
	}
	hist.body.append(ol);
	return hist.root;
}
