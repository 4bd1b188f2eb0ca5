2neg2pos2pos2neg2pos2posB
tree_label