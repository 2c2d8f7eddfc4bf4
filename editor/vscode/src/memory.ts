// "SAGE: Show Memory": the server's `sage.showMemory` answer as a Markdown page. Rule texts
// are data the agent wrote, so they are shown verbatim in code blocks, never rendered.

export interface MemoryRule {
    id: string;
    title: string;
    text: string;
    u: number;
}

export interface MemoryOverview {
    exists: boolean;
    path?: string;
    reason?: string;
    items?: number;
    experiences?: number;
    rules?: MemoryRule[] | number;
    episodes?: number;
    open_episodes?: number;
    adoptions?: number;
}

/** A fence longer than any backtick run in `text`, so the text cannot close it. */
function fenced(text: string): string {
    const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
    const fence = '`'.repeat(longest + 1);
    return `${fence}text\n${text.trimEnd()}\n${fence}`;
}

function inline(text: string): string {
    return text.replace(/[\\`*_[\]<>#|]/g, (c) => `\\${c}`).replace(/\s+/g, ' ').trim();
}

export function memoryMarkdown(m: MemoryOverview): string {
    const out = ['# SAGE experience memory', ''];
    if (m.path) {
        out.push(`Stored in \`${m.path}\` (set \`sage.memory.db\` to use another folder).`, '');
    }
    if (!m.exists) {
        out.push(`No memory to show: ${m.reason ?? 'the server did not say why'}.`);
        return out.join('\n') + '\n';
    }
    const rules = Array.isArray(m.rules) ? m.rules : [];
    const count = (n: number | undefined) => (n === undefined ? '?' : String(n));
    out.push(
        '| items | experiences | episodes | open episodes | adoptions | resident rules |',
        '| ---: | ---: | ---: | ---: | ---: | ---: |',
        `| ${count(m.items)} | ${count(m.experiences)} | ${count(m.episodes)} | ${count(m.open_episodes)} | ` +
            `${count(m.adoptions)} | ${rules.length} |`,
        '',
        'Open episodes wait for your decision on their suggestion (accept or reject).',
        '',
        '## Resident rules',
        '',
    );
    if (rules.length === 0) {
        out.push('None yet: rules are distilled from experiences that helped in several episodes.');
    }
    for (const rule of [...rules].sort((a, b) => b.u - a.u)) {
        out.push(`### ${inline(rule.title)}`, '', `\`${rule.id}\`, utility u = ${rule.u.toFixed(2)}`, '', fenced(rule.text), '');
    }
    return out.join('\n').trimEnd() + '\n';
}
