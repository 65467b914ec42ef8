/**
 * The short section `baton init` keeps in a repository's AGENTS.md or CLAUDE.md to teach agents the
 * work loop, between markers so a re-run replaces it in place and text outside them stays untouched.
 * Pure: text in, text out, and which of the two files gets it; no file system. The tool names are
 * mcp-server/mcp/tools/'s (the MCP server's guide, mcp-server/mcp/guide.ts, is the long form).
 */
import { BatonError } from '../../core/errors';

export const sectionBegin = '<!-- baton:begin -->';
export const sectionEnd = '<!-- baton:end -->';

/** The section, markers included, without a final newline. */
export const agentsSection = `${sectionBegin}
## Work from the Baton backlog

This repository's work is planned on Baton, a backlog shared with other agents and humans, through the \`baton\` MCP server.

1. **Claim** the best ready card with \`claim\` (\`waitSeconds\` up to 60 waits for work). Before resuming a card, \`show\` it and read its attempts and handoff.
2. **Keep it alive**: your lease lasts while this session is open; send \`heartbeat {cardId, progress, note}\` at milestones. \`lease_lost\` means another agent took the card over: stop and claim again.
3. **Messages** on your cards arrive as \`inbox\` in any tool result: act on them first. To ask a human, \`comment {cardId, text, question: true}\`, then \`heartbeat {cardId, waitSeconds: 60}\` until the answer is in \`inbox\`.
4. **Finish** with \`complete {cardId, result, next: true}\` (it claims your next card too). If you cannot: \`release {cardId, reason}\` hands it back, \`fail {cardId, reason}\` when the work itself failed.
5. **Respect scopes**: a card's scope lists the paths it touches. Before editing files outside it, \`reserve {cardId, paths}\`; leave paths refused to you (held by other agents) alone.
6. **Plan** follow-up work as cards: \`create {cards: [...]}\` with \`dependsOn\`.

Written by \`baton init\`, which replaces the text between these markers; edit outside them.
${sectionEnd}`;

/** The instruction files `baton init` writes to. */
export type InstructionsFile = 'AGENTS.md' | 'CLAUDE.md';

/** True when `text` holds a Baton section (its begin marker). */
export function hasSection(text: string | undefined): boolean {
	return text?.includes(sectionBegin) === true;
}

/**
 * Which file gets the section, from the repository's current AGENTS.md and CLAUDE.md (undefined when
 * missing): the one that already has it; else CLAUDE.md when it exists and either AGENTS.md does not
 * or CLAUDE.md does not point to AGENTS.md (CLAUDE.md is what Claude Code reads); else AGENTS.md (read by
 * Codex, Cursor, Copilot and others, and by Claude Code through a CLAUDE.md that imports it).
 */
export function chooseInstructionsFile(agents: string | undefined, claude: string | undefined): InstructionsFile {
	if (hasSection(agents)) {
		return 'AGENTS.md';
	}
	if (hasSection(claude)) {
		return 'CLAUDE.md';
	}
	if (claude !== undefined && (agents === undefined || !claude.includes('AGENTS.md'))) {
		return 'CLAUDE.md';
	}
	return 'AGENTS.md';
}

function count(text: string, part: string): number {
	return text.split(part).length - 1;
}

/**
 * `existing` (undefined when the file is new) with the section in it: the text between the markers
 * replaced, or the section appended after a blank line. Returns `existing` itself when the section is
 * already current. Broken markers (one without the other, several sections) are refused.
 */
export function upsertSection(existing: string | undefined, file: string, section: string = agentsSection): string {
	if (existing === undefined || existing.trim() === '') {
		return `${section}\n`;
	}
	const eol = existing.includes('\r\n') ? '\r\n' : '\n';
	const block = eol === '\n' ? section : section.replace(/\n/g, eol);
	const begins = count(existing, sectionBegin);
	const ends = count(existing, sectionEnd);
	if (begins === 0 && ends === 0) {
		const gap = existing.endsWith(`${eol}${eol}`) ? '' : existing.endsWith(eol) ? eol : `${eol}${eol}`;
		return `${existing}${gap}${block}${eol}`;
	}
	const start = existing.indexOf(sectionBegin);
	const end = existing.indexOf(sectionEnd);
	if (begins !== 1 || ends !== 1 || end < start) {
		throw new BatonError(
			'invalid_input',
			`${file} has ${begins} "${sectionBegin}" and ${ends} "${sectionEnd}" marker(s); Baton's section needs exactly one of each, begin first. Nothing was written. Fix or remove the markers and run again.`,
			{ file },
		);
	}
	const next = `${existing.slice(0, start)}${block}${existing.slice(end + sectionEnd.length)}`;
	return next === existing ? existing : next;
}
