// The language server's environment: the user's, plus the LLM API key from VS Code's secret
// storage under the variable `sage.agent.llm.apiKeyEnv` names. The key is never a setting
// (settings are synced, shared and shown); the server reads the variable by its name.

/** The server's default for `sage.agent.llm.apiKeyEnv` (sage_npu.agent.llm_settings). */
export const DEFAULT_KEY_ENV = 'SAGE_NPU_LLM_API_KEY';

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
// Variables that steer how the server or its children start: a key there would break them.
const STEERING = /^(PATH|HOME|PWD|SHELL|TMPDIR|TEMP|TMP|LD_\w*|DYLD_\w*|PYTHON\w*|NODE_\w*)$/i;

/** Undefined when `name` can carry the key, else why not (a message for the user). */
export function keyEnvProblem(name: string): string | undefined {
    if (!NAME.test(name)) {
        return `sage.agent.llm.apiKeyEnv is "${name}", which is not an environment variable name ` +
            '(letters, digits and _, not starting with a digit)';
    }
    if (STEERING.test(name)) {
        return `sage.agent.llm.apiKeyEnv is "${name}", a variable that controls how programs start; ` +
            `choose a name of its own, e.g. ${DEFAULT_KEY_ENV}`;
    }
    return undefined;
}

export interface ServerEnvironment {
    env: Record<string, string | undefined>;
    /** What was done with the key, for the log: never the key itself. */
    note: string;
    /** Set when a key is stored but could not be passed. */
    problem?: string;
}

/**
 * `base` (the extension host's environment) with the key under `name`. Without a stored key
 * the environment is left as it is, so a key exported in the user's shell still reaches the server.
 */
export function serverEnvironment(
    base: Record<string, string | undefined>,
    name: string,
    key: string | undefined,
): ServerEnvironment {
    const env = { ...base };
    if (!key) {
        const inherited = base[name] ? `, $${name} from the environment is used` : '';
        return { env, note: `no LLM API key in VS Code's secret storage${inherited}` };
    }
    const problem = keyEnvProblem(name);
    if (problem) {
        return { env, note: 'the stored LLM API key is not passed', problem };
    }
    env[name] = key;
    return { env, note: `the LLM API key from VS Code's secret storage is passed as $${name}` };
}
