"""Short templated stories: a character, a place, a wish, a trouble and an ending,
each drawn from small lists, so "tell me a story about X" has an answer about X."""
import random

CHARACTERS = ["fox", "rabbit", "bear", "cat", "dog", "owl", "mouse", "horse", "duck", "frog",
              "lion", "wolf", "goat", "sheep", "bird", "fish", "turtle", "squirrel", "pig",
              "deer", "king", "queen", "princess", "prince", "farmer", "sailor", "baker",
              "shepherd", "girl", "boy", "old man", "old woman", "dragon", "robot", "tree",
              "star", "cloud", "little train", "snowman", "giant"]
NAMES = ["Tom", "Anna", "Ben", "Lily", "Max", "Rosa", "Sam", "Mia", "Leo", "Nora", "Jack",
         "Ella", "Finn", "Ivy", "Oscar", "Ruby", "Hugo", "Clara", "Peter", "Lucy"]
ADJS = ["little", "brave", "curious", "kind", "clever", "shy", "happy", "lonely", "young",
        "old", "gentle", "proud", "tiny", "quiet", "busy"]
PLACES = ["in a green forest", "by a quiet river", "on a small farm", "in a big city",
          "near the sea", "on a high mountain", "in a sunny meadow", "in an old castle",
          "in a little village", "at the edge of a dark wood", "on an island far away",
          "in a garden full of flowers"]
WISHES = ["wanted to see the world", "wished to find a true friend", "dreamed of flying high",
          "wanted to find a lost treasure", "hoped to win the great race",
          "wanted to learn to sing", "wished to build a warm house before winter",
          "wanted to climb the tallest hill", "dreamed of seeing the sea"]
TROUBLES = ["One day a great storm came, and the path was lost.",
            "But the way was long, and the nights were cold.",
            "One morning a river blocked the road, wide and deep.",
            "Then winter came early, and food was hard to find.",
            "But the others laughed and said it could not be done.",
            "One night a strange noise came from the dark.",
            "Then a heavy rock fell and closed the only door."]
HELPERS = ["a wise old owl", "a friendly bear", "a small mouse", "an old fisherman",
           "a kind neighbour", "a bright little bird", "a patient turtle", "a strong horse"]
ENDINGS = ["From that day on, they were the best of friends.",
           "And so they learned that kindness is worth more than gold.",
           "They went home tired and happy, and slept well that night.",
           "Everyone cheered, and the {c} smiled from ear to ear.",
           "And when spring came, the whole land was full of joy.",
           "The {c} never forgot that day, and told the story for many years."]
MORALS = ["The moral of the story is that friends help each other.",
          "The moral is that patience wins in the end.",
          "It shows that even the smallest can be brave.", ""]


def article(word):
    return "an" if word[0] in "aeiou" else "a"


def story(rng, about=None):
    """A story of five to eight sentences about `about` (a noun), or a random character."""
    c = about or rng.choice(CHARACTERS)
    adj = rng.choice(ADJS)
    name = rng.choice(NAMES)
    place = rng.choice(PLACES)
    helper = rng.choice(HELPERS)
    s = [f"Once upon a time, there was {article(adj)} {adj} {c} named {name} who lived {place}.",
         f"{name} {rng.choice(WISHES)}.",
         rng.choice(TROUBLES),
         f"{name} was afraid, but did not give up.",
         f"Then {helper} came by and said, \"Do not worry. I will help you.\"",
         f"Together they worked hard, step by step, until the trouble was behind them.",
         rng.choice(ENDINGS).format(c=c),
         rng.choice(MORALS)]
    if rng.random() < 0.4:
        del s[3]
    return " ".join(x for x in s if x)
