"""The SAGE agent (DESIGN section 6). Today: the offline optimizer (a catalog of Ascend C
transforms, every candidate evaluated) and the recording of its episodes into the experience
memory. The LLM loop comes next."""
