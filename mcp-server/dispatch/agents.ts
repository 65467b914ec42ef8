/**
 * PLACEHOLDER written by helper `run` so the supervisor can start agents before helper `agents` lands
 * the real module (built-in claude/codex/gemini command lines, the full prompt): it has the same names
 * and shapes and is replaced wholesale by theirs. What an agent is started with: the command line
 * from a `--command` template (placeholders {mcpConfig} {promptFile} {prompt} {cardId} {workspace}),
 * the MCP config file whose `baton` server is this Baton's `baton mcp` with the agent's env, and the
 * prompt text. Must not: start anything, or talk to the hub.
 */
import { statSync, writeFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';

import { BatonError } from '../../core/errors';
import type { Card } from '../../core/protocol';
import { findOnPath } from '../cli/launch';

export const placeholders = ['mcpConfig', 'promptFile', 'prompt', 'cardId', 'workspace'] as const;
export const builtInAgents = ['claude', 'codex', 'gemini'] as const;

/** The words of a template, split like a shell would for plain quoting ('…', "…", backslash). */
export function splitTemplate(template: string): string[] {
	const words: string[] = [];
	let word = '';
	let inWord = false;
	let quote: '"' | "'" | undefined;
	for (let i = 0; i < template.length; i++) {
		const c = template[i] ?? '';
		if (quote !== undefined) {
			if (c === quote) {
				quote = undefined;
			} else if (c === '\\' && quote === '"' && i + 1 < template.length) {
				word += template[++i] ?? '';
			} else {
				word += c;
			}
		} else if (c === '"' || c === "'") {
			quote = c;
			inWord = true;
		} else if (c === '\\' && i + 1 < template.length) {
			word += template[++i] ?? '';
			inWord = true;
		} else if (/\s/.test(c)) {
			if (inWord) {
				words.push(word);
			}
			word = '';
			inWord = false;
		} else {
			word += c;
			inWord = true;
		}
	}
	if (quote !== undefined) {
		throw new BatonError('invalid_input', `--command has an unclosed ${quote} quote.`);
	}
	if (inWord) {
		words.push(word);
	}
	return words;
}

/** The built-in command template of an agent kind, or the given template. */
export function agentTemplate(agent: string | undefined, command: string | undefined): string {
	if (command !== undefined) {
		return command;
	}
	switch (agent) {
		case 'claude':
			return 'claude -p --mcp-config {mcpConfig} --permission-mode acceptEdits {prompt}';
		case 'codex':
			return 'codex exec --full-auto {prompt}';
		case 'gemini':
			return 'gemini --yolo -p {prompt}';
		default:
			throw new BatonError(
				'invalid_input',
				`Unknown agent "${agent ?? ''}": use ${builtInAgents.join(', ')}, or --command 'TEMPLATE'.`,
			);
	}
}

/**
 * Checks a template before anything starts: every `{word}` is a known placeholder and the program
 * exists (on PATH, or as a path). Throws invalid_input naming what is wrong.
 */
export function checkTemplate(template: string, env: NodeJS.ProcessEnv = process.env): void {
	for (const m of template.matchAll(/\{([^{}\s]*)\}/g)) {
		const name = m[1] ?? '';
		if (!(placeholders as readonly string[]).includes(name)) {
			throw new BatonError(
				'invalid_input',
				`--command uses an unknown placeholder {${name}}: the allowed ones are ${placeholders.map(p => `{${p}}`).join(' ')}.`,
			);
		}
	}
	const words = splitTemplate(template);
	const program = words[0];
	if (program === undefined) {
		throw new BatonError('invalid_input', '--command is empty: give the program to run and its arguments.');
	}
	if (program.includes('/')) {
		let isFile = false;
		try {
			isFile = statSync(program).isFile();
		} catch {
			isFile = false;
		}
		if (!isFile) {
			throw new BatonError('invalid_input', `The agent program ${program} does not exist.`);
		}
	} else if (findOnPath(program, env.PATH) === undefined) {
		throw new BatonError('invalid_input', `The agent program "${program}" is not on PATH.`);
	}
	if (!isAbsolute(program) && program.includes('/')) {
		// A relative path is resolved against each card's workspace at start: say so by failing early.
		throw new BatonError('invalid_input', `The agent program ${program} is a relative path: give it absolute.`);
	}
}

export interface LaunchInput {
	agent?: string | undefined;
	command?: string | undefined;
	card: Card;
	workspace: string;
	mcpConfigPath: string;
	promptFile: string;
	prompt: string;
	env: Record<string, string>;
}

export interface Launch {
	command: string;
	args: string[];
	cwd: string;
	env: Record<string, string>;
}

/** The agent's command line with the placeholders filled in (each word filled, never re-split). */
export function buildLaunch(input: LaunchInput): Launch {
	const values: Record<string, string> = {
		mcpConfig: input.mcpConfigPath,
		promptFile: input.promptFile,
		prompt: input.prompt,
		cardId: input.card.id,
		workspace: input.workspace,
	};
	const words = splitTemplate(agentTemplate(input.agent, input.command)).map(w =>
		w.replace(/\{([a-zA-Z]+)\}/g, (all, name: string) => values[name] ?? all),
	);
	const [command, ...args] = words;
	if (command === undefined) {
		throw new BatonError('invalid_input', '--command is empty.');
	}
	return { command, args, cwd: input.workspace, env: input.env };
}

/** Writes the agent's MCP config file: `{"mcpServers": {"baton": {command, args, env}}}`. */
export function writeMcpConfig(
	path: string,
	baton: { command: string; args: string[]; env: Record<string, string> },
): void {
	writeFileSync(path, `${JSON.stringify({ mcpServers: { baton } }, null, 2)}\n`, { mode: 0o600 });
}

/** The prompt: the card and how to work it with Baton's tools. */
export function promptText(card: Card, extra: { handoff?: string | undefined } = {}): string {
	return [
		`You are working on Baton card ${card.id}: ${card.title}`,
		'',
		card.body,
		...(extra.handoff === undefined ? [] : ['', `Hand-over note: ${extra.handoff}`]),
		'',
		'Use the baton MCP tools: call claim {} first (it returns this card), heartbeat while you work,',
		'then complete with a short result, or fail with the reason if you cannot do it.',
	].join('\n');
}
