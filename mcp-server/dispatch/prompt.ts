/**
 * The prompt a dispatched agent starts with: its card (title, body, acceptance, scope), the
 * hand-over note, what earlier attempts ended with, the card's messages, and how to use Baton's tools
 * (claim {} returns the card it already holds; heartbeat; complete or fail). Pure: data in, text out.
 * The text is passed as one argv element ({prompt}) or a file ({promptFile}); it is kept under
 * `maxPromptBytes` (Linux refuses a single argument over 128 KiB), cutting the longest parts first
 * and saying where the rest is. Must not: read the backlog, or put anything but the card's own text in.
 */
import type { Attempt, Card, Message } from '../../core/protocol';

/** Under Linux's MAX_ARG_STRLEN (131,072 bytes) with room for the rest of the command line. */
export const maxPromptBytes = 100_000;

export interface PromptInput {
	card: Pick<Card, 'id' | 'title' | 'body' | 'acceptance' | 'attempts' | 'maxAttempts'> &
		Partial<Pick<Card, 'scope' | 'handoff' | 'phase' | 'project' | 'review'>>;
	/** The folder the agent runs in (the card's worktree, or the repository root). */
	workspace: string;
	/** The card's messages, oldest first. */
	messages?: readonly Pick<Message, 'from' | 'text' | 'at' | 'question'>[] | undefined;
	/** Earlier attempts (card/get's), oldest first: their reasons tell the agent what went wrong before. */
	attempts?: readonly Pick<Attempt, 'outcome' | 'reason' | 'progressNote' | 'endedAt'>[] | undefined;
}

/** At most `max` characters of `text`, with a pointer to the full text when cut. */
function clip(text: string, max: number, cardId: string): string {
	if (text.length <= max) {
		return text;
	}
	return `${text.slice(0, Math.max(0, max))}\n[… cut here: ${text.length - max} more characters; call show {"cardId": "${cardId}"} for the full text]`;
}

function bullet(lines: readonly string[]): string {
	return lines.map(l => `- ${l.replace(/\n/g, '\n  ')}`).join('\n');
}

function toolGuide(cardId: string, workspace: string): string {
	const id = JSON.stringify(cardId);
	return [
		'How to work with Baton (its tools are on the MCP server named "baton"):',
		`1. First call claim {} (no arguments): it returns this card, which is already yours, with its lease. Do not claim other cards.`,
		`2. Work only in ${workspace}, and only on this card. Before editing files outside its scope, call reserve {"cardId": ${id}, "paths": [...]}.`,
		`3. At each milestone (at least every few minutes) call heartbeat {"cardId": ${id}, "progress": 0-100, "note": "what you did"}. Messages for you arrive as inbox in any tool result: act on them first.`,
		`4. When the work is done and the acceptance holds, call complete {"cardId": ${id}, "result": "what you did and how you checked it"} (complete commits what you changed in the card's workspace).`,
		`5. If you cannot do it, call fail {"cardId": ${id}, "reason": "why"}; to hand it back for someone else, release {"cardId": ${id}, "reason": "why"}. To ask a human, comment {"cardId": ${id}, "text": "...", "question": true}, then heartbeat {"cardId": ${id}, "waitSeconds": 60} until the answer is in inbox.`,
		'6. After complete, fail or release, stop and exit: Baton starts a new agent for the next card.',
	].join('\n');
}

interface Sections {
	body: string;
	messages: string[];
	handoff: string;
}

function render(input: PromptInput, s: Sections): string {
	const { card, workspace } = input;
	const out: string[] = [
		`You are a coding agent started by Baton (baton run) to do one card of the team's shared backlog: ${card.id}.`,
		'',
		`# ${card.id}: ${card.title}`,
	];
	const facts = [
		card.project ? `project ${card.project}` : undefined,
		card.phase ? `phase ${card.phase}` : undefined,
		`attempt ${card.attempts} of ${card.maxAttempts}`,
		card.review !== undefined && card.review !== 'none' ? `completion goes to review (${card.review})` : undefined,
	].filter((f): f is string => f !== undefined);
	out.push(facts.join(' · '));
	if (s.body.trim() !== '') {
		out.push('', s.body.trim());
	}
	if (card.acceptance.length > 0) {
		out.push('', 'Acceptance (all must hold before you complete):', bullet(card.acceptance));
	}
	if (card.scope !== undefined && card.scope.length > 0) {
		out.push('', 'Scope (the paths and locks this card may touch):', bullet(card.scope));
	}
	if (s.handoff !== '') {
		out.push('', 'Hand-over note for this attempt (start from it):', s.handoff);
	}
	const earlier = (input.attempts ?? []).filter(a => a.outcome !== 'active' && (a.reason ?? a.progressNote) !== null);
	if (earlier.length > 0) {
		out.push(
			'',
			'Earlier attempts ended:',
			bullet(earlier.slice(-5).map(a => `${a.outcome}: ${clip(a.reason ?? a.progressNote ?? '', 500, card.id)}`)),
		);
	}
	if (s.messages.length > 0) {
		out.push('', 'Messages on this card (oldest first):', bullet(s.messages));
	}
	out.push('', toolGuide(card.id, workspace));
	return out.join('\n');
}

/** The agent's prompt for `input`, under maxPromptBytes. */
export function agentPrompt(input: PromptInput): string {
	const id = input.card.id;
	const all = (input.messages ?? []).map(
		m => `${m.from}${m.question ? ' (question)' : ''} at ${m.at}: ${clip(m.text, 4000, id)}`,
	);
	let sections: Sections = {
		body: input.card.body,
		messages: all.slice(-30),
		handoff: clip(input.card.handoff ?? '', 8000, id),
	};
	let text = render(input, sections);
	// Cut the body, then the messages, until it fits: the tool guide and the card's head always stay.
	for (
		let budget = 40_000;
		Buffer.byteLength(text) > maxPromptBytes && budget >= 250;
		budget = Math.floor(budget / 2)
	) {
		sections = {
			body: clip(input.card.body, budget, id),
			messages: sections.messages.slice(-Math.max(1, Math.floor(budget / 2000))).map(m => clip(m, budget / 4, id)),
			handoff: clip(input.card.handoff ?? '', budget / 4, id),
		};
		text = render(input, sections);
	}
	if (Buffer.byteLength(text) > maxPromptBytes) {
		// Only a card whose title, acceptance or scope alone is huge gets here: keep the guide whole.
		const guide = `${toolGuide(id, input.workspace)}\n\n`;
		let rest = text;
		while (Buffer.byteLength(guide + rest) > maxPromptBytes) {
			rest = rest.slice(0, Math.floor(rest.length * 0.9));
		}
		text = guide + rest;
	}
	return text;
}
