"""Runs the tutorials of docs/tutorials (scripts in docs/examples) with small
arguments, so that the code the documentation shows keeps working."""


def test_lift_and_train(load_example):
    # Predicting zero on the hidden edges gives a relative error of 1.0, the
    # untrained network about 1.2; 20 epochs bring it to about 0.3.
    error = load_example('lift_and_train').main(epochs=20, seed=0)
    assert error < 0.6


def test_ocean_drifters(load_example, raw_root):
    root = raw_root('ocean_drifters', ['dataBuoys.jld2'])
    # 40 test drifters, two balanced-ish classes; 10 epochs reach about 0.95.
    accuracy = load_example('ocean_drifters').main(root, epochs=10, seed=0)
    assert accuracy >= 0.8


def test_citation_imputation(load_example, raw_root):
    root = raw_root('citation_complex',
                    ['150250_simplices.npy', '150250_cochains.npy'])
    tutorial = load_example('citation_imputation')
    scores, l1 = tutorial.main(root, order=1, epochs=30, seed=0)
    # The trained network beats the median it is given on the hidden simplices
    # (30 epochs: 19.0 % against 11.3 % within 5 %, mean absolute error 2.2 against 5.3).
    assert l1['SAN'] < l1['median']
    assert scores['SAN'] > scores['median']


def test_graph_classification(load_example, tiny_tu_dataset):
    # 24 small graphs, with (class 1) or without (class 0) triangles, 6 test
    # graphs; the triangles tell the classes apart (10 epochs: all 6 right).
    accuracy = load_example('graph_classification').main(tiny_tu_dataset, 'TINY',
                                                         epochs=10, seed=0)
    assert accuracy >= 5 / 6


def test_graph_classification_with_edge_labels(load_example,
                                               tiny_tu_dataset_with_edge_labels):
    # A TU dataset whose edges have labels (as MUTAG's bond types): they reach x_1
    # beside the lifted node features (3 + 2 columns), which the model's sizes per
    # order follow (it refused the batches when built with dataset.num_features).
    accuracy = load_example('graph_classification').main(
        tiny_tu_dataset_with_edge_labels, 'TINY', epochs=10, seed=0)
    assert accuracy >= 5 / 6
