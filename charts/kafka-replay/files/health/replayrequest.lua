-- Argo CD health check for kafkareplay.dev ReplayRequest (argocd-cm key
-- resource.customizations.health.kafkareplay.dev_ReplayRequest; see
-- docs/gitops.md). It reads the conditions, not the phase: the phase is a
-- summary for people.
--
--   Healthy      Succeeded is True and no consumer is still paused.
--   Degraded     Succeeded is False: the request failed, whatever the
--                consumers' restore still does.
--   Progressing  everything else: not yet seen by the launcher, a status
--                older than the request (observedGeneration), accepted or
--                waiting for the group, pausing consumers, a Job running,
--                a plan awaiting approval, a success whose consumers are
--                still being restored.
--
-- Argo CD runs it without Lua's string library (only base, table and a safe
-- os), so it builds messages with .. alone.

local hs = { status = "Progressing", message = "waiting for the kafka-replay launcher to accept the request" }

local function find(conditions, type)
  for _, c in ipairs(conditions) do
    if c.type == type then
      return c
    end
  end
  return nil
end

-- "Reason: message", or whichever of the two is set.
local function describe(c)
  local text = tostring(c.reason or "")
  if c.message ~= nil and c.message ~= "" then
    if text ~= "" then
      text = text .. ": "
    end
    text = text .. tostring(c.message)
  end
  return text
end

-- A consumer the launcher recorded or paused and has not restored yet.
local function consumersHeld(status)
  if status.consumers == nil then
    return false
  end
  for _, c in ipairs(status.consumers) do
    if c.state == "Recorded" or c.state == "Paused" then
      return true
    end
  end
  return false
end

local status = obj.status
if status == nil or status.conditions == nil then
  return hs
end
-- Compared as text: Argo CD hands over integers as numbers, but numbers it
-- decoded as json.Number as strings.
local generation = obj.metadata.generation
if status.observedGeneration ~= nil and generation ~= nil and tostring(status.observedGeneration) ~= tostring(generation) then
  hs.message = "waiting for the launcher to observe generation " .. generation
  return hs
end

local conditions = status.conditions
local succeeded = find(conditions, "Succeeded")
if succeeded ~= nil and succeeded.status == "False" then
  hs.status = "Degraded"
  hs.message = describe(succeeded)
  return hs
end
if succeeded ~= nil and succeeded.status == "True" then
  local restored = find(conditions, "ConsumersRestored")
  if consumersHeld(status) then
    hs.message = describe(succeeded) .. "; restoring the consumers"
    if restored ~= nil then
      hs.message = hs.message .. " (" .. describe(restored) .. ")"
    end
    return hs
  end
  hs.status = "Healthy"
  hs.message = describe(succeeded)
  if restored ~= nil and restored.reason ~= "Restored" then
    -- NotRestored: someone else changed a consumer while it was paused.
    hs.message = hs.message .. "; " .. describe(restored)
  end
  return hs
end

-- Not finished: say what it is waiting for, the most telling first.
local approval = find(conditions, "AwaitingApproval")
if approval ~= nil and approval.status == "True" then
  hs.message = describe(approval)
  return hs
end
local running = find(conditions, "Running")
if running ~= nil and running.status == "True" then
  hs.message = describe(running)
  return hs
end
local paused = find(conditions, "ConsumersPaused")
if paused ~= nil then
  hs.message = describe(paused)
  return hs
end
-- Running False before the end: the Job could not be created yet (the
-- launcher retries). Finished is an earlier Job's end (the planning Job).
if running ~= nil and running.reason ~= "Finished" then
  hs.message = describe(running)
  return hs
end
local accepted = find(conditions, "Accepted")
if accepted ~= nil then
  hs.message = describe(accepted)
  return hs
end
if status.message ~= nil and status.message ~= "" then
  hs.message = status.message
end
return hs
