/**
 * A unified diff as the board shows it: the patch parsed by jsdiff's parsePatch (it knows
 * git's dialect: new, deleted, renamed and binary files), each file a <details> block with its path and
 * counts, each hunk its header and lines with old and new line numbers, added and removed lines in the
 * theme's diff colours. Every piece of the patch goes in as text (el() sets textContent), never as HTML;
 * a patch jsdiff cannot read is shown as plain text. Keeps no state and fetches nothing.
 */
import { parsePatch } from 'diff';
import type { DiffFile } from '../core/protocol';
import { el } from './dom';

/** "+12 −3", or "binary" when git counted no lines. */
export function countsText(f: Pick<DiffFile, 'insertions' | 'deletions'>): string {
	return f.insertions === null || f.deletions === null ? 'binary' : `+${f.insertions} −${f.deletions}`;
}

export const statusWords: Record<DiffFile['status'], string> = {
	added: 'added',
	modified: 'modified',
	deleted: 'deleted',
	renamed: 'renamed',
	copied: 'copied',
	typechange: 'type changed',
};

/** The +/− counts as two spans (coloured) or the word binary. */
export function countsElement(f: Pick<DiffFile, 'insertions' | 'deletions'>): HTMLElement {
	const span = el('span', 'diff-counts');
	if (f.insertions === null || f.deletions === null) {
		span.append(el('span', 'muted', 'binary'));
	} else {
		span.append(el('span', 'diff-ins', `+${f.insertions}`), ' ', el('span', 'diff-del', `−${f.deletions}`));
	}
	span.setAttribute('aria-label', f.insertions === null ? 'binary' : `${f.insertions} added, ${f.deletions} removed`);
	return span;
}

type Parsed = ReturnType<typeof parsePatch>[number];

const stripPrefix = (name: string | undefined): string | undefined =>
	name === undefined || name === '/dev/null' ? undefined : name.replace(/^[ab]\//, '');

/** The file a parsed patch describes: by its new (or, deleted, old) name, else its place in the list. */
function fileOf(p: Parsed, index: number, files: readonly DiffFile[]): DiffFile | undefined {
	const name = stripPrefix(p.newFileName) ?? stripPrefix(p.oldFileName);
	return files.find(f => f.path === name) ?? files[index];
}

function noContentText(p: Parsed, file: DiffFile | undefined): string {
	if (p.isBinary === true) {
		return 'Binary file: not shown.';
	}
	if (p.isRename === true || file?.status === 'renamed') {
		return `Renamed from ${file?.oldPath ?? stripPrefix(p.oldFileName) ?? '?'}, content unchanged.`;
	}
	if (p.oldMode !== undefined && p.newMode !== undefined && p.oldMode !== p.newMode) {
		return `Mode changed from ${p.oldMode} to ${p.newMode}.`;
	}
	return 'No lines changed.';
}

/** One file's block: a summary line (path, change, counts) and its hunks. `domId` lets the file list jump to it. */
function fileBlock(p: Parsed, file: DiffFile | undefined, domId: string): HTMLElement {
	const name = file?.path ?? stripPrefix(p.newFileName) ?? stripPrefix(p.oldFileName) ?? '(unnamed)';
	const block = el('details', 'diff-file');
	block.open = true;
	block.id = domId;
	const summary = el('summary', 'diff-file-head');
	summary.append(el('span', 'diff-path', name));
	if (file !== undefined) {
		summary.append(
			el('span', `diff-status diff-status--${file.status}`, statusWords[file.status]),
			countsElement(file),
		);
	}
	block.append(summary);
	if (p.hunks.length === 0) {
		block.append(el('p', 'muted diff-note', noContentText(p, file)));
		return block;
	}
	const code = el('div', 'diff-code');
	code.setAttribute('role', 'region');
	code.setAttribute('aria-label', `Changes in ${name}`);
	// Focusable so the keyboard can scroll a wide diff sideways.
	code.tabIndex = 0;
	for (const h of p.hunks) {
		code.append(el('div', 'diff-line diff-hunk', `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`));
		let oldNo = h.oldStart;
		let newNo = h.newStart;
		for (const line of h.lines) {
			const kind = line.charAt(0);
			if (kind === '\\') {
				code.append(el('div', 'diff-line diff-eof', line));
				continue;
			}
			const cls = kind === '+' ? 'diff-add' : kind === '-' ? 'diff-rem' : 'diff-ctx';
			const row = el('div', `diff-line ${cls}`);
			row.append(
				el('span', 'diff-num', kind === '+' ? '' : String(oldNo)),
				el('span', 'diff-num', kind === '-' ? '' : String(newNo)),
				el('span', 'diff-text', line),
			);
			if (kind !== '+') {
				oldNo++;
			}
			if (kind !== '-') {
				newNo++;
			}
			code.append(row);
		}
	}
	block.append(code);
	return block;
}

/**
 * The patch's file blocks, in order; `ids(i, file)` names each block's element id. Returns the paths
 * shown (so the list can tell which files the cut patch left out).
 */
export function renderPatch(
	patch: string,
	files: readonly DiffFile[],
	ids: (path: string) => string,
): { root: HTMLElement; shown: Set<string> } {
	const root = el('div', 'diff-files');
	const shown = new Set<string>();
	if (patch.trim() === '') {
		return { root, shown };
	}
	let parsed: Parsed[];
	try {
		parsed = parsePatch(patch);
	} catch {
		// Not a patch jsdiff reads: the text as it is, still only text.
		const pre = el('pre', 'diff-raw', patch);
		pre.tabIndex = 0;
		root.append(pre);
		return { root, shown: new Set(files.map(f => f.path)) };
	}
	parsed.forEach((p, i) => {
		const file = fileOf(p, i, files);
		const path = file?.path ?? `#${i}`;
		shown.add(path);
		root.append(fileBlock(p, file, ids(path)));
	});
	return { root, shown };
}
