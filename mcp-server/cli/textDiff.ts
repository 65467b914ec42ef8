/**
 * A unified diff of two small texts (config and instruction files) for `baton init --dry-run`: line
 * based, longest common subsequence, three lines of context, `@@ -a,b +c,d @@` hunk headers. Pure.
 * Not for big files: above ~4 million line pairs it shows the whole new text instead.
 */

type Op = { kind: ' ' | '-' | '+'; line: string };

function splitLines(text: string): string[] {
	const lines = text.split('\n');
	if (lines.at(-1) === '') {
		lines.pop();
	}
	return lines;
}

function diffOps(a: string[], b: string[]): Op[] {
	const n = a.length;
	const m = b.length;
	// lcs[i * w + j]: length of the longest common subsequence of a[i..] and b[j..].
	const w = m + 1;
	const lcs = new Uint32Array((n + 1) * w);
	for (let i = n - 1; i >= 0; i--) {
		for (let j = m - 1; j >= 0; j--) {
			lcs[i * w + j] =
				a[i] === b[j]
					? (lcs[(i + 1) * w + j + 1] ?? 0) + 1
					: Math.max(lcs[(i + 1) * w + j] ?? 0, lcs[i * w + j + 1] ?? 0);
		}
	}
	const ops: Op[] = [];
	let i = 0;
	let j = 0;
	while (i < n || j < m) {
		if (i < n && j < m && a[i] === b[j]) {
			ops.push({ kind: ' ', line: a[i++] ?? '' });
			j++;
		} else if (i < n && (j >= m || (lcs[(i + 1) * w + j] ?? 0) >= (lcs[i * w + j + 1] ?? 0))) {
			ops.push({ kind: '-', line: a[i++] ?? '' });
		} else {
			ops.push({ kind: '+', line: b[j++] ?? '' });
		}
	}
	return ops;
}

/** `--- a/file`, `+++ b/file` and the hunks; '' when the texts are equal. */
export function unifiedDiff(file: string, before: string, after: string, context = 3): string {
	if (before === after) {
		return '';
	}
	const a = splitLines(before);
	const b = splitLines(after);
	const header = [`--- a/${file}`, `+++ b/${file}`];
	if (a.length * b.length > 4_000_000) {
		return [...header, `@@ -1,${a.length} +1,${b.length} @@`, ...a.map(l => `-${l}`), ...b.map(l => `+${l}`)].join(
			'\n',
		);
	}
	const ops = diffOps(a, b);
	const changed = ops.flatMap((op, k) => (op.kind === ' ' ? [] : [k]));
	const out = [...header];
	let k = 0;
	while (k < changed.length) {
		const first = changed[k] ?? 0;
		let last = first;
		// Merge changes whose contexts touch into one hunk.
		while (k + 1 < changed.length && (changed[k + 1] ?? 0) - last <= 2 * context + 1) {
			last = changed[++k] ?? last;
		}
		k++;
		const from = Math.max(0, first - context);
		const to = Math.min(ops.length, last + context + 1);
		const prefix = ops.slice(0, from);
		const oldStart = prefix.filter(o => o.kind !== '+').length;
		const newStart = prefix.filter(o => o.kind !== '-').length;
		const hunk = ops.slice(from, to);
		const oldLen = hunk.filter(o => o.kind !== '+').length;
		const newLen = hunk.filter(o => o.kind !== '-').length;
		out.push(
			`@@ -${oldLen === 0 ? oldStart : oldStart + 1},${oldLen} +${newLen === 0 ? newStart : newStart + 1},${newLen} @@`,
			...hunk.map(o => `${o.kind}${o.line}`),
		);
	}
	return out.join('\n');
}
