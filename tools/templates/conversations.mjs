// The conversations every chat template is rendered over. Each one is a render
// context without the special tokens (those come from the template's source).
const kWeatherTool = {
  type: "function",
  function: {
    name: "get_weather",
    description: "Get the current weather in a city",
    parameters: {
      type: "object",
      properties: {
        city: { type: "string", description: "The city name" },
        unit: { type: "string", enum: ["celsius", "fahrenheit"] },
      },
      required: ["city"],
    },
  },
};

const kSearchTool = {
  type: "function",
  function: {
    name: "search",
    description: "Search the web",
    parameters: {
      type: "object",
      properties: { query: { type: "string" }, limit: { type: "integer" } },
      required: ["query"],
    },
  },
};

const kToolCall = {
  id: "call0001a",
  type: "function",
  function: { name: "get_weather", arguments: { city: "Paris", unit: "celsius" } },
};

const kSystem = { role: "system", content: "You are a helpful assistant." };
const kHello = { role: "user", content: "Hello! How are you?" };
const kReply = { role: "assistant", content: "I am fine, thank you. How can I help?" };
const kAsk = { role: "user", content: "What is 2 + 2?" };

function toolTurns() {
  return [
    { role: "user", content: "What is the weather in Paris?" },
    { role: "assistant", content: "", tool_calls: [kToolCall] },
    { role: "tool", tool_call_id: "call0001a", name: "get_weather", content: '{"temperature": 21, "sky": "clear"}' },
  ];
}

export const kConversations = [
  { id: "system_user_gen", context: { messages: [kSystem, kHello], add_generation_prompt: true } },
  { id: "user_only_gen", context: { messages: [kHello], add_generation_prompt: true } },
  { id: "user_only_nogen", context: { messages: [kHello], add_generation_prompt: false } },
  {
    id: "multi_turn_gen",
    context: { messages: [kSystem, kHello, kReply, kAsk], add_generation_prompt: true },
  },
  {
    id: "multi_turn_nogen",
    context: {
      messages: [kHello, kReply, kAsk, { role: "assistant", content: "2 + 2 = 4." }],
      add_generation_prompt: false,
    },
  },
  {
    id: "thinking_on",
    context: { messages: [kSystem, kAsk], add_generation_prompt: true, enable_thinking: true },
  },
  {
    id: "thinking_off",
    context: { messages: [kSystem, kAsk], add_generation_prompt: true, enable_thinking: false },
  },
  {
    id: "reasoning_history",
    context: {
      messages: [
        kHello,
        { role: "assistant", content: "Hi there!", reasoning_content: "The user greets me." },
        kAsk,
      ],
      add_generation_prompt: true,
      enable_thinking: true,
    },
  },
  {
    id: "content_parts",
    context: {
      messages: [
        { role: "system", content: [{ type: "text", text: "Be brief." }] },
        {
          role: "user",
          content: [
            { type: "text", text: "First part." },
            { type: "text", text: "Second part." },
          ],
        },
      ],
      add_generation_prompt: true,
    },
  },
  {
    id: "tools_offered",
    context: { messages: [kSystem, kHello], tools: [kWeatherTool, kSearchTool], add_generation_prompt: true },
  },
  {
    id: "tool_call_result",
    context: { messages: [kSystem, ...toolTurns()], tools: [kWeatherTool], add_generation_prompt: true },
  },
  {
    id: "tool_call_answer",
    context: {
      messages: [...toolTurns(), { role: "assistant", content: "It is 21 degrees and clear in Paris." }],
      tools: [kWeatherTool],
      add_generation_prompt: false,
    },
  },
  {
    id: "unicode_quotes",
    context: {
      messages: [
        { role: "user", content: 'Grüße, 世界 🌍! "quoted" \\ back\nslash\ttab' },
        { role: "assistant", content: "  spaced reply  \n" },
        { role: "user", content: "Ça va ?" },
      ],
      add_generation_prompt: true,
    },
  },
  {
    id: "parallel_tool_calls",
    context: {
      messages: [
        { role: "user", content: "Weather in Paris and Rome? Also search for news." },
        {
          role: "assistant",
          content: null,
          tool_calls: [
            kToolCall,
            {
              id: "call0002b",
              type: "function",
              function: { name: "get_weather", arguments: { city: "Rome" } },
            },
            {
              id: "call0003c",
              type: "function",
              function: { name: "search", arguments: '{"query": "news", "limit": 3}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "call0001a", name: "get_weather", content: "21 C" },
        { role: "tool", tool_call_id: "call0002b", name: "get_weather", content: "25 C" },
        { role: "tool", tool_call_id: "call0003c", name: "search", content: "No news today." },
      ],
      tools: [kWeatherTool, kSearchTool],
      add_generation_prompt: true,
      enable_thinking: false,
    },
  },
  {
    id: "long_history",
    context: {
      messages: [
        kSystem,
        kHello,
        kReply,
        kAsk,
        { role: "assistant", content: "<think>Simple sum.</think>2 + 2 = 4." },
        { role: "user", content: "And 3 * 3?" },
        { role: "assistant", content: "9." },
        { role: "user", content: "Thanks!" },
      ],
      add_generation_prompt: true,
    },
  },
  {
    id: "system_only",
    context: { messages: [kSystem], add_generation_prompt: false },
  },
];
