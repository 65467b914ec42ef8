/**
 * The review desk's rules, decided from the extension's live copy of the cards: which
 * cards wait for this human's review (oldest first, the order Review Next Card takes), which cards
 * need input, the status bar's "N to review · M questions", and which of those are new since the
 * last look (for notifications). A card enters review or needs input once per time it happens; what
 * was so when the window connected is the baseline, never announced. Pure: no vscode, no I/O, so it
 * is tested under plain node; who may approve is still the hub's to decide.
 */
import type { Card } from '../core/protocol';

/** Oldest first: the card that has waited longest is reviewed first. */
function byAge(a: Card, b: Card): number {
	return a.updatedAt.localeCompare(b.updatedAt) || a.id.localeCompare(b.id);
}

/**
 * Cards in review that `me` may approve (not its own completion), oldest first; those a reviewing
 * agent holds come last (a human may still decide them, but someone is on it).
 */
export function toReview(cards: Iterable<Card>, me: string): Card[] {
	const held = (c: Card) => (c.claimOwner === null ? 0 : 1);
	return [...cards]
		.filter(c => c.status === 'review' && c.completedBy !== me)
		.sort((a, b) => held(a) - held(b) || byAge(a, b));
}

/** Cards whose agent asked a question nobody answered yet, oldest first. */
export function needingInput(cards: Iterable<Card>): Card[] {
	return [...cards].filter(c => c.needsInput === true).sort(byAge);
}

export interface DeskSummary {
	text: string;
	tooltip: string;
	reviews: number;
	questions: number;
}

/** "2 to review · 1 question" with a tooltip listing the cards; undefined when there is nothing. */
export function deskSummary(cards: Iterable<Card>, me: string): DeskSummary | undefined {
	const all = [...cards];
	const reviews = toReview(all, me);
	const questions = needingInput(all);
	if (reviews.length === 0 && questions.length === 0) {
		return undefined;
	}
	const parts: string[] = [];
	const lines: string[] = [];
	if (reviews.length > 0) {
		parts.push(`${reviews.length} to review`);
		lines.push(
			'To review:',
			...reviews.map(c => `  ${c.id} — ${c.title}${c.completedBy ? ` (by ${c.completedBy})` : ''}`),
		);
	}
	if (questions.length > 0) {
		parts.push(`${questions.length} question${questions.length === 1 ? '' : 's'}`);
		lines.push('Needs input:', ...questions.map(c => `  ${c.id} — ${c.title}`));
	}
	return { text: parts.join(' · '), tooltip: lines.join('\n'), reviews: reviews.length, questions: questions.length };
}

export interface DeskNews {
	/** Cards that entered review since the last look (this human may review them). */
	reviews: Card[];
	/** Cards whose agent asked a question since the last look. */
	questions: Card[];
}

export class DeskTracker {
	private review: Set<string> | undefined;
	private asking: Set<string> | undefined;

	/** Forgets everything (a reconnect or another data dir): the next look is a new baseline. */
	reset(): void {
		this.review = undefined;
		this.asking = undefined;
	}

	/** What is new since the last look; nothing on the first look after a reset. */
	look(cards: Iterable<Card>, me: string): DeskNews {
		const all = [...cards];
		const reviews = toReview(all, me);
		const questions = needingInput(all);
		const news: DeskNews = {
			reviews: this.review === undefined ? [] : reviews.filter(c => !this.review?.has(c.id)),
			questions: this.asking === undefined ? [] : questions.filter(c => !this.asking?.has(c.id)),
		};
		this.review = new Set(reviews.map(c => c.id));
		this.asking = new Set(questions.map(c => c.id));
		return news;
	}
}

/** The notification's sentence for cards that entered review; one sentence for a burst. */
export function reviewNewsText(cards: readonly Card[]): string {
	const [first] = cards;
	if (cards.length === 1 && first) {
		return `${first.id} “${clip(first.title, 80)}” is ready for your review${first.completedBy ? ` (completed by ${first.completedBy})` : ''}.`;
	}
	return `${cards.length} cards are ready for your review: ${listed(cards)}.`;
}

/** The notification's sentence for questions; `question` is the text of the one card's question, if known. */
export function questionNewsText(cards: readonly Card[], question?: { from: string; text: string }): string {
	const [first] = cards;
	if (cards.length === 1 && first) {
		return question
			? `${question.from} asks on ${first.id}: ${clip(question.text, 200)}`
			: `An agent asks a question on ${first.id} “${clip(first.title, 80)}”.`;
	}
	return `Agents ask questions on ${cards.length} cards: ${listed(cards)}.`;
}

function listed(cards: readonly Card[]): string {
	return (
		cards
			.slice(0, 3)
			.map(c => c.id)
			.join(', ') + (cards.length > 3 ? ` and ${cards.length - 3} more` : '')
	);
}

function clip(text: string, max: number): string {
	const line = text.replace(/\s+/g, ' ').trim();
	return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}
