-- Drives the SAGE language server from a real Neovim (0.7+, headless), the way a user would:
-- open a kernel, attach the client, break the kernel in the buffer, :write, wait for the
-- server's diagnostic, repair it, :write, wait for the fault to clear, ask for code lenses.
--
-- Run: SAGE_NVIM_E2E=/path/config.json nvim --headless -u NONE -i NONE -n -c 'luafile save_cycle.lua'
-- The config (JSON) names the server command, the kernel, the line text to delete, the code
-- to wait for, the result file and the time limit of each wait. Everything observed is written
-- to the result file as JSON; the Python test asserts on it. Every wait is bounded and every
-- error is caught, so Neovim always quits and the result file always says what happened.

local result = { steps = {}, ms = {} }
local cfg
local started = vim.loop.hrtime()

local function now_ms()
  return math.floor((vim.loop.hrtime() - started) / 1e6)
end

local function step(name)
  table.insert(result.steps, name)
  result.ms[name] = now_ms()
end

local function write_result()
  local f = assert(io.open(cfg and cfg.result or "sage_nvim_result.json", "w"))
  f:write(vim.json.encode(result))
  f:close()
end

-- What the editor shows for this buffer: every diagnostic, in the shape the test compares.
local function diagnostics(bufnr)
  local out = {}
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    table.insert(out, {
      line = d.lnum + 1, -- 1-based, as a user reads it
      col = d.col,
      code = d.code,
      source = d.source,
      severity = d.severity,
      message = d.message,
    })
  end
  return out
end

local function has_code(bufnr, code)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.source == "sage" and d.code == code then
      return true
    end
  end
  return false
end

local function find_line(bufnr, needle)
  for i, text in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if text:find(needle, 1, true) then
      return i - 1, text
    end
  end
  error(string.format("the kernel has no line containing %q", needle))
end

local function lens_titles(bufnr)
  local responses, err = vim.lsp.buf_request_sync(bufnr, "textDocument/codeLens",
    { textDocument = { uri = vim.uri_from_bufnr(bufnr) } }, 10000)
  if not responses then
    error("textDocument/codeLens got no answer within 10 s: " .. tostring(err))
  end
  local titles = {}
  for _, r in pairs(responses) do
    if r.err then
      error("textDocument/codeLens failed: " .. vim.inspect(r.err))
    end
    for _, lens in ipairs(r.result or {}) do
      table.insert(titles, { line = lens.range.start.line + 1, title = lens.command and lens.command.title or "" })
    end
  end
  return titles
end

local function run()
  local path = os.getenv("SAGE_NVIM_E2E")
  assert(path, "set SAGE_NVIM_E2E to the config JSON")
  local f = assert(io.open(path, "r"))
  cfg = vim.json.decode(f:read("*a"))
  f:close()

  vim.o.hidden = true
  vim.cmd("edit " .. vim.fn.fnameescape(cfg.kernel))
  local bufnr = vim.api.nvim_get_current_buf()
  vim.bo[bufnr].filetype = "cpp"

  local client_id = vim.lsp.start_client({
    name = "sage",
    cmd = cfg.cmd,
    root_dir = cfg.root,
    init_options = cfg.settings,
    on_init = function(client)
      -- Neovim 0.7 does not send settings by itself; a user's config does this.
      client.notify("workspace/didChangeConfiguration", { settings = cfg.settings })
    end,
    on_exit = function(code, signal)
      result.server_exit = { code = code, signal = signal, at_ms = now_ms() }
    end,
    handlers = {
      ["window/showMessage"] = function(_, params)
        result.messages = result.messages or {}
        table.insert(result.messages, params.message)
      end,
    },
  })
  if not client_id then
    error("vim.lsp.start_client returned nil for " .. vim.inspect(cfg.cmd))
  end
  vim.lsp.buf_attach_client(bufnr, client_id)

  local function client_ready()
    local c = vim.lsp.get_client_by_id(client_id)
    return (c and c.initialized) or result.server_exit ~= nil
  end
  if not vim.wait(cfg.timeout_ms, client_ready, 50) or result.server_exit then
    error("the server did not finish initialize: " .. vim.inspect(result.server_exit or "timed out"))
  end
  step("initialized")

  -- The fault: delete the configured line (the test deletes a FreeTensor, so a later
  -- AllocTensor finds its queue full).
  local lnum, removed = find_line(bufnr, cfg.remove)
  vim.api.nvim_buf_set_lines(bufnr, lnum, lnum + 1, false, {})
  vim.cmd("write")
  step("fault_saved")
  local seen = vim.wait(cfg.timeout_ms, function()
    return has_code(bufnr, cfg.code) or result.server_exit ~= nil
  end, 100)
  result.fault = { diagnostics = diagnostics(bufnr), seen = seen and result.server_exit == nil }
  if not result.fault.seen then
    error(string.format("no %q diagnostic within %d ms of the save", cfg.code, cfg.timeout_ms))
  end
  step("fault_shown")

  -- The repair: put the line back and save; the fault must go and the summary lens appear.
  vim.api.nvim_buf_set_lines(bufnr, lnum, lnum, false, { removed })
  vim.cmd("write")
  step("fix_saved")
  local cleared = vim.wait(cfg.timeout_ms, function()
    return not has_code(bufnr, cfg.code) or result.server_exit ~= nil
  end, 100)
  result.fixed = { diagnostics = diagnostics(bufnr), cleared = cleared and result.server_exit == nil }
  if not result.fixed.cleared then
    error(string.format("the %q diagnostic was still shown %d ms after the repair", cfg.code, cfg.timeout_ms))
  end
  step("fault_cleared")
  -- The lens reflects the newest report, which is published with the diagnostics above;
  -- poll briefly in case the client answers before the server stored it.
  local deadline = now_ms() + 10000
  while true do
    result.fixed.lenses = lens_titles(bufnr)
    local summary = vim.tbl_filter(function(l)
      return l.title:find("SAGE: correct", 1, true) == 1
    end, result.fixed.lenses)
    if #summary > 0 or now_ms() >= deadline then
      break
    end
    vim.wait(200)
  end
  step("lenses")

  vim.lsp.stop_client(client_id)
  vim.wait(5000, function()
    return result.server_exit ~= nil
  end, 50)
  step("stopped")
end

local ok, err = pcall(run)
if not ok then
  result.error = tostring(err)
end
pcall(write_result)
vim.cmd("qall!")
